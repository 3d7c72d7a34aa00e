"""Installing like other modules: `make install` (with DESTDIR) puts the module where a
`loadmodule` line finds it, and the Debian package (scripts/deb, `make deb`) holds the module,
a commented configuration snippet, the licence and the README; the module from each loads into
the server under test (the matrix runs this on every server, Debian 13's Redis 8 and Valkey 8
among them)."""

import os
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
        subprocess.run(["make", "-C", REPO, "uninstall", f"DESTDIR={dest}", "PREFIX=/opt/rs"],
                       check=True, capture_output=True)
        assert not os.path.exists(module)


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
                     "./usr/share/doc/rsbloom/rsbloom.conf",
                     "./usr/share/doc/rsbloom/copyright",
                     "./usr/share/doc/rsbloom/README.md"]:
            assert path in listing, listing
        root = os.path.join(out, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        snippet = open(os.path.join(root, "usr/share/doc/rsbloom/rsbloom.conf")).read()
        assert "# loadmodule /usr/lib/redis/modules/rsbloom.so" in snippet
        # Every line of the snippet is a comment: installing it enables nothing.
        assert all(not line or line.startswith("#") for line in snippet.splitlines())
        loads_and_answers(os.path.join(root, "usr/lib/redis/modules/rsbloom.so"))
