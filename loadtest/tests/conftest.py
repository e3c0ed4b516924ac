import os

import pytest

from harness import services, stacks
from harness.contract.checking import Target


@pytest.fixture(scope="session")
def services_up():
    started = services.up()
    yield
    services.up()  # a test that took a backend down must not leave it down
    services.down(started)


def first_available_stack(for_what: str):
    """REFERENCE_STACK, else the first stack this machine can run."""
    wanted = os.environ.get("REFERENCE_STACK")
    candidates = stacks.select(wanted) if wanted else stacks.discover()
    available = [s for s in candidates if s.unavailable_reason() is None]
    if not available:
        pytest.fail(f"no available stack {for_what} (see `make list`)")
    return available[0]


@pytest.fixture(scope="session")
def reference_stack(services_up):
    """A real stack to put behind the broken proxy: REFERENCE_STACK, else the first available one."""
    stack = first_available_stack("to test the verifier against")
    stacks.build(stack)
    with stacks.start(stack):
        yield stack


@pytest.fixture
def target(reference_stack):
    return Target(reference_stack.name, reference_stack.host, reference_stack.port)
