"""Library versions read generically from the lock and build files stacks commit."""
import json

from harness import stacks
from harness.bench import machine

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent><artifactId>spring-boot-starter-parent</artifactId><version>3.3.5</version></parent>
  <properties><netty.version>4.1.115.Final</netty.version></properties>
  <dependencies>
    <dependency><groupId>io.netty</groupId><artifactId>netty-all</artifactId><version>${netty.version}</version></dependency>
    <dependency><artifactId>managed-by-parent</artifactId></dependency>
  </dependencies>
</project>"""


def test_pom_package_lock_and_composer_lock(tmp_path):
    (tmp_path / "pom.xml").write_text(POM)
    (tmp_path / "package-lock.json").write_text(json.dumps({"packages": {
        "": {"dependencies": {"ioredis": "5.4.1"}},
        "node_modules/ioredis": {"version": "5.4.1"}, "node_modules/transitive": {"version": "1.0.0"}}}))
    (tmp_path / "composer.lock").write_text(json.dumps({"packages": [{"name": "vendor/lib", "version": "v2.1.0"}]}))
    assert machine.library_versions(tmp_path) == {"spring-boot-starter-parent": "3.3.5", "netty-all": "4.1.115.Final",
                                                  "ioredis": "5.4.1", "vendor/lib": "v2.1.0"}


def test_an_unreadable_file_is_reported_not_fatal(tmp_path):
    (tmp_path / "composer.lock").write_text("{not json")
    assert machine.library_versions(tmp_path)["composer.lock"].startswith("unreadable")


def test_a_failing_versions_command_is_reported_with_what_it_printed(tmp_path):
    (tmp_path / "stack.toml").write_text(
        'name = "{}"\ndescription = "d"\nlanguage = "l"\nframework = "f"\nport = 19999\nbuild = "true"\n'
        'run = "true"\nversions = "echo somelib=1.2.3; no-such-command-here"\n'.format(tmp_path.name))
    found = machine.stack_versions(stacks.parse(tmp_path / "stack.toml"))
    assert found["somelib"] == "1.2.3"
    assert found["versions"].startswith("the manifest's versions command failed (exit 127)"), found
    assert "no-such-command-here" in found["versions"], found
