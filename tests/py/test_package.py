"""Installing like other modules: `make install` (with DESTDIR) puts the module where a
`loadmodule` line finds it, and the Debian package (scripts/deb, `make deb`) holds the module,
a commented configuration snippet, the licence and the README; the module from each loads into
the server under test (the matrix runs this on every server, Debian 13's Redis 8 and Valkey 8
among them)."""

import os
import re
import subprocess
import tempfile

from redis_server import Server

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def loads_and_answers(module):
    srv = Server("package", module)
    try:
        srv.start()
        c = srv.client()
        assert c.execute_command("BF.ADD", "k", "x") == 1
        assert c.execute_command("BF.EXISTS", "k", "x") == 1
        assert c.execute_command("CF.ADD", "c", "x") == 1
    finally:
        srv.cleanup()


def test_make_install_and_uninstall():
    with tempfile.TemporaryDirectory() as dest:
        subprocess.run(["make", "-C", REPO, "install", f"DESTDIR={dest}", "PREFIX=/opt/rs"],
                       check=True, capture_output=True)
        module = os.path.join(dest, "opt/rs/lib/redis/modules/rsbloom.so")
        # Redis refuses a module file without execute permission.
        assert oct(os.stat(module).st_mode & 0o777) == "0o755"
        loads_and_answers(module)
        # The loader beside it, in $(PREFIX)/bin.
        cli = os.path.join(dest, "opt/rs/bin/rsbloom")
        assert oct(os.stat(cli).st_mode & 0o777) == "0o755"
        usage = subprocess.run([cli, "load", "--help"], check=True, capture_output=True, text=True)
        assert "--key" in usage.stdout
        subprocess.run(["make", "-C", REPO, "uninstall", f"DESTDIR={dest}", "PREFIX=/opt/rs"],
                       check=True, capture_output=True)
        assert not os.path.exists(module)
        assert not os.path.exists(cli)


def test_the_debian_package():
    with tempfile.TemporaryDirectory() as out:
        deb = subprocess.run([os.path.join(REPO, "scripts", "deb"), out], check=True,
                             capture_output=True, text=True).stdout.strip()
        field = lambda name: subprocess.run(  # noqa: E731
            ["dpkg-deb", "-f", deb, name], check=True, capture_output=True, text=True
        ).stdout.strip()
        assert field("Package") == "rsbloom"
        assert field("Architecture") == subprocess.run(
            ["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
        assert "libc6" in field("Depends")
        listing = subprocess.run(["dpkg-deb", "-c", deb], check=True, capture_output=True,
                                 text=True).stdout
        for path in ["./usr/lib/redis/modules/rsbloom.so",
                     "./usr/bin/rsbloom",
                     "./etc/redis/rsbloom.conf",
                     "./usr/share/doc/rsbloom/copyright",
                     "./usr/share/doc/rsbloom/README.md"]:
            assert path in listing, listing
        root = os.path.join(out, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        control = os.path.join(out, "control")
        subprocess.run(["dpkg-deb", "-e", deb, control], check=True)
        # The snippet is a conffile where Debian keeps configuration (container images drop
        # /usr/share/doc), and its one active line loads the module.
        assert open(os.path.join(control, "conffiles")).read().split() == ["/etc/redis/rsbloom.conf"]
        snippet = open(os.path.join(root, "etc/redis/rsbloom.conf")).read()
        active = [line for line in snippet.splitlines() if line and not line.startswith("#")]
        assert active == ["loadmodule /usr/lib/redis/modules/rsbloom.so"], active
        # Every page the packaged README links is in the package.
        readme = open(os.path.join(root, "usr/share/doc/rsbloom/README.md")).read()
        linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", readme))
        assert linked, "the README links no docs page"
        for page in linked:
            assert os.path.isfile(os.path.join(root, "usr/share/doc/rsbloom", page)), page
        # A server whose config includes the snippet (its path pointed at the extracted
        # module) loads the module.
        module = os.path.join(root, "usr/lib/redis/modules/rsbloom.so")
        included = os.path.join(out, "rsbloom.conf")
        with open(included, "w") as f:
            f.write(snippet.replace("/usr/lib/redis/modules/rsbloom.so", module))
        srv = Server("include", None, ["--include", included])
        srv.start()
        try:
            assert srv.client().execute_command("BF.ADD", "k", "x") == 1
        finally:
            srv.cleanup()
        loads_and_answers(os.path.join(root, "usr/lib/redis/modules/rsbloom.so"))
