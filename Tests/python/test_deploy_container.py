"""The container image (Deploy/container/Containerfile), proved without a container engine
(none runs here): the test reads the file's runtime stage and makes what it describes in a
chroot. A Debian root from `debootstrap --variant=minbase` of the stage's release gets the
stage's RUN lines (its apt-get install of RUNTIME_PACKAGES, its user), its COPY --from=build
lines (build-stage paths mapped to this checkout and to a static-stdlib build made with the
file's own `swift build` command), its WORKDIR, ENV and USER; then the image's ENTRYPOINT and
CMD run in it with `chroot --userspec`, its HEALTHCHECK command runs in it too, a whole game is
played with the real client and found in the database in the volume folder.

The debootstrap root with the packages installed is cached under .build/container-root, keyed
by everything that makes it (release, mirror, the base image line, the ARGs and the install
line), so only the first run downloads. Each test module works on a fresh copy of it.
Not covered: the engine itself (layers, the VOLUME and EXPOSE mechanics, the health check's
schedule) and the build stage's toolchain image; docs/OPERATIONS.md says so."""

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import REPO, Server, free_port
from ws_client import create_player, play_to_score

CONTAINERFILE = REPO / "Deploy/container/Containerfile"
IGNORE_FILE = REPO / ".dockerignore"
CACHE = REPO / ".build/container-root"
STATIC_SCRATCH = ".build/static"
MIRROR = "http://deb.debian.org/debian"
# What docker and podman give a container's processes when the image sets no PATH.
ENGINE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The debian:*-slim images' apt sources (deb822), so the chroot gets the same package versions.
SLIM_SOURCES = """Types: deb
URIs: http://deb.debian.org/debian
Suites: {release} {release}-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: {release}-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# Packages in the list that no NEEDED entry of the binary names, each for its reason (the
# Containerfile says the same): the event-loop plugin libwebsockets opens at start, TLS roots
# for URLSession, the health check's program.
NOT_LINKED_BUT_NEEDED = {"libwebsockets-evlib-ev", "ca-certificates", "curl"}


# ---- Reading the Containerfile ---------------------------------------------------------------

def instructions(text):
    """(KEYWORD, rest) for each instruction: continuation lines joined, comments dropped (a
    comment line inside a continued instruction is dropped too, as the engines do)."""
    result, pending = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        if whole:
            keyword, _, rest = whole.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    assert not pending, "the Containerfile ends inside a continued line"
    return result


def env_pairs(rest):
    """ENV NAME=value NAME=value ... as a dict."""
    values = {}
    for pair in shlex.split(rest):
        name, equals, value = pair.partition("=")
        assert equals, f"ENV {rest!r}: write ENV NAME=value"
        values[name] = value
    return values


def copied_from_build(rest):
    """COPY --from=build SOURCE DEST as (SOURCE, DEST)."""
    words = shlex.split(rest)
    options = [word for word in words if word.startswith("--")]
    paths = [word for word in words if not word.startswith("--")]
    assert options == ["--from=build"] and len(paths) == 2 and not paths[1].endswith("/"), \
        f"COPY {rest!r}: write COPY --from=build SOURCE DEST, DEST the full path"
    return paths[0], paths[1]


@dataclass
class Stage:
    image: str
    name: str
    steps: list = field(default_factory=list)  # (KEYWORD, rest) after FROM, in order

    def all(self, keyword):
        return [rest for key, rest in self.steps if key == keyword]

    def one(self, keyword):
        found = self.all(keyword)
        assert len(found) == 1, f"stage {self.name}: expected one {keyword}, found {found}"
        return found[0]

    @property
    def args(self):
        values = {}
        for rest in self.all("ARG"):
            name, _, value = shlex.split(rest)[0].partition("=")
            values[name] = value
        return values

    @property
    def env(self):
        values = {}
        for rest in self.all("ENV"):
            values.update(env_pairs(rest))
        return values

    @property
    def copies(self):
        """(source, destination) of each COPY --from=build line."""
        return [copied_from_build(rest) for rest in self.all("COPY")]

    @property
    def healthcheck(self):
        rest = self.one("HEALTHCHECK")
        match = re.fullmatch(r"((?:--\S+\s+)*)CMD\s+(.+)", rest)
        assert match, f"HEALTHCHECK {rest!r}"
        command = match[2]
        return json.loads(command) if command.startswith("[") else ["/bin/sh", "-c", command]


def stages():
    result = []
    for keyword, rest in instructions(CONTAINERFILE.read_text()):
        if keyword == "FROM":
            match = re.fullmatch(r"(\S+)\s+AS\s+(\S+)", rest, re.IGNORECASE)
            assert match, f"FROM {rest!r}: name every stage (FROM IMAGE AS NAME)"
            result.append(Stage(match[1], match[2]))
        else:
            assert result, f"{keyword} before the first FROM"
            result[-1].steps.append((keyword, rest))
    return {stage.name: stage for stage in result}


def runtime_release(stage):
    match = re.fullmatch(r"debian:([a-z]+)-slim", stage.image)
    assert match, f"the runtime stage is FROM {stage.image}, not debian:RELEASE-slim"
    return match[1]


def static_build_command(build):
    """The build stage's own `swift build ...`, in a scratch folder of its own here."""
    runs = " && ".join(build.all("RUN"))
    match = re.search(r"swift build [^&;|]*", runs)
    assert match, "the build stage runs no `swift build`"
    command = shlex.split(match[0])
    assert "--static-swift-stdlib" in command and "--product" in command, command
    return command + ["--scratch-path", STATIC_SCRATCH]


def build_stage_source(path, binary):
    """Where a build-stage path is in this checkout: the stage copies the checkout to its
    WORKDIR /src and installs the binary it builds at /usr/local/bin/retrorapid."""
    if path == "/usr/local/bin/retrorapid":
        return binary
    assert path.startswith("/src/"), f"COPY --from=build {path}: the test maps only /src/... and the binary"
    return REPO / path.removeprefix("/src/")


# ---- Making the root -------------------------------------------------------------------------

def mounts_under(root):
    root = os.path.realpath(root)
    with open("/proc/mounts") as table:
        points = [line.split()[1].replace("\\040", " ") for line in table]
    return sorted((point for point in points if point == root or point.startswith(root + "/")),
                  key=len, reverse=True)


def unmount_everything_under(root):
    """Deepest first; lazily if busy. Nothing under a root is ever deleted while mounted."""
    for point in mounts_under(root):
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", point], check=True)
    assert not mounts_under(root), mounts_under(root)


def remove_root(path):
    if path.exists():
        unmount_everything_under(path)
        shutil.rmtree(path)


class ProcMounted:
    """/proc in the chroot, as every container has (Swift's CommandLine reads
    /proc/self/cmdline: without it `retrorapid serve` sees no arguments); unmounted on exit,
    whatever happened."""

    def __init__(self, root):
        self.point = Path(root) / "proc"

    def __enter__(self):
        self.point.mkdir(exist_ok=True)
        subprocess.run(["mount", "-t", "proc", "proc", str(self.point)], check=True)
        return self

    def __exit__(self, *exc):
        unmount_everything_under(self.point)


def chroot_sh(root, script, env, user=None):
    command = ["chroot"] + ([f"--userspec={user}"] if user else []) + [str(root), "/bin/sh", "-c", script]
    ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, f"{script}\n{ran.stdout}\n{ran.stderr}"
    return ran


def base_with_packages(runtime):
    """debootstrap of the release plus the stage's first RUN (its package install), cached by
    what makes it. Returns (root, packages the bare base already had)."""
    release = runtime_release(runtime)
    first_run = runtime.all("RUN")[0]
    assert "$RUNTIME_PACKAGES" in first_run and "apt-get install" in first_run, \
        "the runtime stage's first RUN installs $RUNTIME_PACKAGES"
    made_of = json.dumps([release, MIRROR, SLIM_SOURCES, runtime.image, runtime.args, first_run])
    key = hashlib.sha256(made_of.encode()).hexdigest()[:16]
    folder = CACHE / key
    if (folder / "complete").exists():
        return folder / "root", set((folder / "base-packages").read_text().split())

    assert shutil.which("debootstrap"), "debootstrap is not installed: `make test` installs it (DEPLOY_TEST_PACKAGES)"
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.iterdir():  # roots of an older package list, and half-made ones
        remove_root(old)
    root = folder / "root"
    root.parent.mkdir()
    made = subprocess.run(["debootstrap", "--variant=minbase", release, str(root), MIRROR],
                          capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    unmount_everything_under(root)
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(SLIM_SOURCES.format(release=release))
    env = {"PATH": ENGINE_PATH, **runtime.args}
    with ProcMounted(root):
        # The slim image keeps no downloaded packages (its apt is set to delete them).
        chroot_sh(root, "apt-get clean", env)
        base = chroot_sh(root, "dpkg-query -W -f '${Package}\\n'", env).stdout.split()
        chroot_sh(root, first_run, env)
        chroot_sh(root, "apt-get clean", env)
    (folder / "base-packages").write_text("\n".join(sorted(base)) + "\n")
    (folder / "complete").write_text(made_of + "\n")
    return root, set(base)


@dataclass
class Image:
    root: Path
    runtime: Stage
    base_packages: set
    binary: Path
    env: dict      # the image's environment (ENV over the engine's PATH)
    user: str
    workdir: str


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The runtime stage made in a fresh copy of the cached root; /proc mounted while the
    module's tests run, unmounted and the copy removed afterwards, pass or fail."""
    assert os.geteuid() == 0, "the container test needs root: debootstrap, chroot and mount"
    every = stages()
    build, runtime = every["build"], every["runtime"]
    with open("/etc/os-release") as release_file:
        host_release = re.search(r"^VERSION_CODENAME=(\S+)", release_file.read(), re.M)[1]
    assert host_release == runtime_release(runtime), \
        f"the static binary is built here on {host_release}; the image runs {runtime_release(runtime)}"

    built = subprocess.run(static_build_command(build), cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    binary = REPO / STATIC_SCRATCH / "release/retrorapid"
    # The build stage's fonts step, into the checkout's data/fonts its COPY line names.
    fonts = subprocess.run(["scripts/install-fonts.sh", "data/fonts"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert fonts.returncode == 0, fonts.stderr

    cached, base_packages = base_with_packages(runtime)
    root = tmp_path_factory.mktemp("container") / "root"
    subprocess.run(["cp", "-a", str(cached), str(root)], check=True)
    try:
        with ProcMounted(root):
            env, user, workdir = {"PATH": ENGINE_PATH}, "0:0", "/"
            first_run_seen = False
            for keyword, rest in runtime.steps:
                if keyword == "RUN":
                    if not first_run_seen:  # the package install: in the cached root already
                        first_run_seen = True
                        continue
                    chroot_sh(root, rest, {**env, **runtime.args}, user=user)
                elif keyword == "COPY":
                    source_path, destination = copied_from_build(rest)
                    source = build_stage_source(source_path, binary)
                    target = root / destination.lstrip("/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if source.is_dir():
                        shutil.copytree(source, target, dirs_exist_ok=True)
                    else:
                        shutil.copy2(source, target)
                elif keyword == "WORKDIR":
                    workdir = rest
                    (root / rest.lstrip("/")).mkdir(parents=True, exist_ok=True)
                elif keyword == "ENV":
                    env.update(env_pairs(rest))
                elif keyword == "USER":
                    user = rest
                else:  # what only the engine acts on; anything else the test cannot make
                    assert keyword in {"ARG", "VOLUME", "EXPOSE", "HEALTHCHECK", "STOPSIGNAL", "ENTRYPOINT", "CMD", "LABEL"}, \
                        f"the runtime stage's {keyword} is not rebuilt by this test: teach it, or write it another way"
            yield Image(root, runtime, base_packages, binary, env, user, workdir)
    finally:
        remove_root(root)


def chroot_command(image, *command):
    """`command` as the image's user, in its working directory, inside the root."""
    return ["chroot", f"--userspec={image.user}", str(image.root),
            "/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", image.workdir, *command]


# ---- The tests -------------------------------------------------------------------------------

def test_the_containerfile_has_the_shape_the_issue_asks_for():
    every = stages()
    assert set(every) == {"build", "runtime"}
    build, runtime = every["build"], every["runtime"]
    release = runtime_release(runtime)
    assert re.fullmatch(rf"swift:6\.3(\.\d+)?-{release}", build.image), "build and run on the same Debian release"
    assert build.one("WORKDIR") == "/src" and build.one("COPY") == ". ."
    runs = " && ".join(build.all("RUN"))
    assert "install -m 0755 .build/release/retrorapid /usr/local/bin/retrorapid" in runs
    assert "scripts/install-fonts.sh data/fonts" in runs
    env = runtime.env
    assert env["RETRORAPID_HOST"] == "0.0.0.0"
    assert runtime.one("EXPOSE") == env["RETRORAPID_PORT"] == "8080"
    assert runtime.one("VOLUME") == os.path.dirname(env["RETRORAPID_DATABASE_PATH"]) == "/var/lib/retrorapid"
    assert runtime.one("STOPSIGNAL") == "SIGTERM"
    uid, _, gid = runtime.one("USER").partition(":")
    assert int(uid) != 0 and int(gid) != 0, "the server does not run as root"
    assert "/healthz" in " ".join(runtime.healthcheck)
    destinations = {destination for _, destination in runtime.copies}
    assert {"/usr/local/bin/retrorapid", env["RETRORAPID_WEB_ROOT"], env["RETRORAPID_MIGRATIONS_PATH"],
            env["RETRORAPID_FONTS_PATH"], env["RETRORAPID_OPENAPI_PATH"], env["RETRORAPID_CONSOLE_ROOT"]} == destinations
    ignored = {line.strip() for line in IGNORE_FILE.read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert {".build", "data", "test-artifacts", ".git"} <= ignored


def test_the_packages_are_exactly_what_the_binary_needs(image):
    listed = set(image.runtime.args["RUNTIME_PACKAGES"].split())
    needed = re.findall(r"^\s*NEEDED\s+(\S+)$",
                        subprocess.run(["objdump", "-p", str(image.binary)], capture_output=True, text=True, check=True).stdout, re.M)
    assert "libwebsockets.so.17" in needed and not any("swift" in library.lower() for library in needed), needed
    resolved = subprocess.run(["chroot", str(image.root), "ldd", "/usr/local/bin/retrorapid"],
                              capture_output=True, text=True, check=True).stdout
    assert "not found" not in resolved, resolved
    owners = set()
    for library in needed:
        match = re.search(rf"^\s*{re.escape(library)} => (\S+)", resolved, re.M)
        if match is None:  # the dynamic loader itself, listed by its full path
            match = re.search(rf"^\s*(/\S*{re.escape(library)})\s", resolved, re.M)
        assert match, f"{library} is not in the chroot's ldd output:\n{resolved}"
        path = match[1]
        candidates = {path, os.path.realpath(path), re.sub(r"^/usr/lib/", "/lib/", path), re.sub(r"^/lib/", "/usr/lib/", path)}
        owner = None
        for candidate in candidates:
            found = subprocess.run(["chroot", str(image.root), "dpkg", "-S", candidate], capture_output=True, text=True)
            if found.returncode == 0:
                owner = found.stdout.split(":")[0]
                break
        assert owner, f"no package in the root owns {path}"
        owners.add(owner)
    assert owners <= listed | image.base_packages, f"needed, not installed by the stage: {owners - listed - image.base_packages}"
    assert listed <= owners | NOT_LINKED_BUT_NEEDED, f"listed, needed by nothing: {listed - owners - NOT_LINKED_BUT_NEEDED}"


def test_the_image_serves_a_whole_game_as_its_user_and_keeps_it_in_the_volume(image, tmp_path):
    port = free_port()
    # What `docker run -e RETRORAPID_HOST=127.0.0.1 -e RETRORAPID_PORT=...` gives it: the host's
    # loopback here (no network namespace), a free port.
    env = {**image.env, "RETRORAPID_HOST": "127.0.0.1", "RETRORAPID_PORT": str(port)}
    entrypoint, cmd = json.loads(image.runtime.one("ENTRYPOINT")), json.loads(image.runtime.one("CMD"))
    volume = image.root / image.runtime.one("VOLUME").lstrip("/")
    database = image.root / env["RETRORAPID_DATABASE_PATH"].lstrip("/")
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(chroot_command(image, *entrypoint, *cmd), env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(port, database, process, log_path)
    healthcheck = chroot_command(image, *image.runtime.healthcheck)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, f"the server exited with {process.returncode}:\n{server.log()}"
            try:
                if server.request("GET", "/healthz").status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"no /healthz within 20 s:\n{server.log()}"
            time.sleep(0.1)

        checked = subprocess.run(healthcheck, env=env, capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, checked.stdout + checked.stderr

        # Everything it serves comes from the copied files: the client, fonts, the API's document.
        page = server.request("GET", "/")
        assert page.status == 200 and page.body == (REPO / "Web/index.html").read_bytes()
        font = next(path.name for path in sorted((REPO / "data/fonts").iterdir()) if path.suffix in (".ttf", ".otf"))
        assert server.request("GET", f"/fonts/{font}").status == 200
        described = server.request("GET", "/api/v1/openapi.json")
        assert described.status == 200 and described.body == (REPO / "docs/openapi.json").read_bytes()

        token = create_player(server, "Contained")
        over = play_to_score(server, token, "cruise", 5)
        assert over["saved"] is True and over["score"] >= 5, over

        # An operator command as `docker exec CONTAINER retrorapid ...` runs it: the image's
        # user and environment, so it finds the live database with no flag.
        backup = volume / "backup.sqlite"
        copied = subprocess.run(chroot_command(image, "retrorapid", "backup", "/" + str(backup.relative_to(image.root))),
                                env=env, capture_output=True, text=True, timeout=60)
        assert copied.returncode == 0, copied.stdout + copied.stderr

        process.send_signal(getattr(signal, image.runtime.one("STOPSIGNAL")))
        assert process.wait(timeout=30) == 0, server.log()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    log = server.log()
    assert "RetroRapid stopped" in log
    assert "fonts folder not found" not in log and "OpenAPI document not found" not in log, log
    # The engine's health check says so once the server is gone: it can fail.
    assert subprocess.run(healthcheck, env=env, capture_output=True, timeout=30).returncode != 0
    # The database is the image user's, in the volume folder, and holds the game.
    uid, gid = (int(part) for part in image.user.split(":"))
    assert database.parent == volume
    assert (database.stat().st_uid, database.stat().st_gid) == (uid, gid)
    for copy in (database, backup):
        with sqlite3.connect(copy) as connection:
            stored = connection.execute("SELECT level, score FROM games WHERE public_id = ?", (over["gameId"],)).fetchall()
        assert stored == [("cruise", over["score"])], copy
