import os

import pytest

from harness import services, stacks, verify


@pytest.fixture(scope="session")
def services_up():
    started = services.up()
    yield
    services.up()  # a test that took a backend down must not leave it down
    services.down(started)


@pytest.fixture(scope="session")
def reference_stack(services_up):
    """A real stack to put behind the broken proxy: REFERENCE_STACK, else the first available one."""
    wanted = os.environ.get("REFERENCE_STACK")
    candidates = stacks.select(wanted) if wanted else stacks.discover()
    available = [s for s in candidates if s.unavailable_reason() is None]
    if not available:
        pytest.fail("no available stack to test the verifier against (see `make list`)")
    stack = available[0]
    stacks.build(stack)
    with stacks.start(stack):
        yield stack


@pytest.fixture
def target(reference_stack):
    return verify.Target(reference_stack.name, reference_stack.host, reference_stack.port)
