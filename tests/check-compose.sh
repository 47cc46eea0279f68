#!/usr/bin/env bash
# tests/check-compose.sh - docker-compose.yml parses (`docker-compose config`
# needs no Docker engine) and describes the ensemble tests/zkharness.sh
# starts: the same server ids, the harness's recommended client ports
# published on 127.0.0.1, its quorum/election ports inside the containers,
# the same zoo.cfg settings (tickTime, initLimit, syncLimit, 4lw whitelist,
# forceSync, session limits...), and tests/demo services pointed at it.
# A change on one side only fails here.  The checker also proves on altered
# copies that it notices such changes.
#
# Skips (77) without docker-compose or python3-yaml, unless CI is set: then
# it fails.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
compose_file=$srcdir/docker-compose.yml
harness=$srcdir/tests/zkharness.sh
py=/usr/bin/python3

missing() {
    case ${CI:-} in
        '' | false | 0)
            printf 'SKIP: %s\n' "$*"
            exit 77
            ;;
        *)
            printf 'FAIL: %s (CI is set: must not skip)\n' "$*"
            exit 1
            ;;
    esac
}
command -v docker-compose >/dev/null 2>&1 ||
    missing "docker-compose not installed (Debian package docker-compose)"
if ! { [[ -x $py ]] && "$py" -c 'import yaml'; } 2>/dev/null; then
    missing "$py with the yaml module not found (Debian package python3-yaml)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zkl-check-compose.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# ---- the compose side: what docker-compose makes of the file
if ! (cd "$tmp" && docker-compose -f "$compose_file" config) \
    >"$tmp/config.yml" 2>"$tmp/config.err"; then
    cat "$tmp/config.err"
    printf 'FAIL: docker-compose config cannot parse %s\n' "$compose_file"
    exit 1
fi

# ---- the harness side: the zoo.cfg it writes and the ports it recommends
# The common zoo.cfg lines come from the harness's own function, with
# placeholders for what differs by design (data dir, client port).
harness_cfg=$(
    unset ZKH_TICK_TIME ZKH_EXTRA_CFG
    # shellcheck source=zkharness.sh source-path=SCRIPTDIR disable=SC1091
    . "$harness"
    zkh__common_cfg /DATADIR 0
) || { printf 'FAIL: cannot get the zoo.cfg lines of %s\n' "$harness"; exit 1; }
harness_text=$(<"$harness")
# one value of the harness's source: the first match of an extended regex
# whose group 1 is the value
harness_value() {
    local re=$1
    [[ $harness_text =~ $re ]] || {
        printf 'FAIL: %s no longer matches /%s/: update this check\n' "$harness" "$re" >&2
        return 1
    }
    printf '%s\n' "${BASH_REMATCH[1]}"
}
{
    printf '%s\n' "$harness_cfg"
    printf 'initLimit=%s\n' "$(harness_value 'initLimit=([0-9]+)')"
    printf 'syncLimit=%s\n' "$(harness_value 'syncLimit=([0-9]+)')"
    printf 'znode.container.checkIntervalMs=%s\n' \
        "$(harness_value 'ZKH_CONTAINER_CHECK_MS:-([0-9]+)')"
} >"$tmp/harness.cfg"
{
    printf 'client %s\n' "$(harness_value 'ZKH_ENSEMBLE_CLIENT_PORTS="([0-9 ]+)"')"
    printf 'quorum %s\n' "$(harness_value 'ZKH_ENSEMBLE_QUORUM_PORTS="([0-9 ]+)"')"
    printf 'election %s\n' "$(harness_value 'ZKH_ENSEMBLE_ELECTION_PORTS="([0-9 ]+)"')"
} >"$tmp/harness.ports"

# ---- compare
"$py" - "$tmp/config.yml" "$tmp/harness.cfg" "$tmp/harness.ports" <<'PY'
import copy
import re
import sys

import yaml

config_path, cfg_path, ports_path = sys.argv[1:4]
compose = yaml.safe_load(open(config_path))

harness_cfg = {}
for line in open(cfg_path):
    line = line.strip()
    if line and not line.startswith("#"):
        key, _, value = line.partition("=")
        harness_cfg[key] = value
harness_ports = {}
for line in open(ports_path):
    kind, *ports = line.split()
    harness_ports[kind] = [int(p) for p in ports]

# zoo.cfg keys the harness sets that differ by design: the data directory,
# and the client port and address (each container listens on 2181 of its
# own address; the host publishes it on 127.0.0.1, checked below).
BY_DESIGN = {"dataDir", "clientPort", "clientPortAddress"}
# zoo.cfg keys the official image writes from its ZOO_* variables.
IMAGE_VARS = {
    "tickTime": "ZOO_TICK_TIME",
    "initLimit": "ZOO_INIT_LIMIT",
    "syncLimit": "ZOO_SYNC_LIMIT",
    "maxClientCnxns": "ZOO_MAX_CLIENT_CNXNS",
    "admin.enableServer": "ZOO_ADMINSERVER_ENABLED",
    "4lw.commands.whitelist": "ZOO_4LW_COMMANDS_WHITELIST",
    "standaloneEnabled": "ZOO_STANDALONE_ENABLED",
}
IDS = (1, 2, 3)


def env_of(service):
    env = service.get("environment") or {}
    if isinstance(env, list):  # ["KEY=value", ...]
        env = dict(e.partition("=")[::2] for e in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def zoo_cfg(env):
    """The zoo.cfg settings the image writes for these variables, plus the
    JVM's system properties."""
    cfg = {key: env[var] for key, var in IMAGE_VARS.items() if var in env}
    for word in env.get("ZOO_CFG_EXTRA", "").split():
        key, _, value = word.partition("=")
        cfg[key] = value
    for word in env.get("SERVER_JVMFLAGS", "").split():
        if word.startswith("-D"):
            key, _, value = word[2:].partition("=")
            cfg[key] = value
    return cfg


def published(service):
    """[(host_ip, published, target)] of a service's port mappings."""
    out = []
    for p in service.get("ports") or []:
        if isinstance(p, dict):
            out.append((str(p.get("host_ip", "")), int(p["published"]),
                        int(p["target"])))
            continue
        spec = str(p).split("/")[0]
        parts = spec.split(":")
        if len(parts) == 3:
            out.append((parts[0], int(parts[1]), int(parts[2])))
        elif len(parts) == 2:
            out.append(("", int(parts[0]), int(parts[1])))
        else:
            out.append(("", 0, int(parts[0])))
    return out


def check(compose, harness_cfg, harness_ports):
    errors = []
    err = errors.append
    services = compose.get("services") or {}
    servers = {}
    for i in IDS:
        name = f"zk{i}"
        svc = services.get(name)
        if svc is None:
            err(f"no service {name}")
            continue
        if svc.get("image") != "zookeeper:3.8":
            err(f"{name}: image {svc.get('image')!r}, want 'zookeeper:3.8'")
        env = env_of(svc)
        if env.get("ZOO_MY_ID") != str(i):
            err(f"{name}: ZOO_MY_ID {env.get('ZOO_MY_ID')!r}, want '{i}'")
        # server.N=host:quorum:election;client
        listed = {}
        for word in env.get("ZOO_SERVERS", "").split():
            m = re.fullmatch(r"server\.(\d+)=([^:]+):(\d+):(\d+)(?::\w+)?;(\d+)",
                             word)
            if not m:
                err(f"{name}: cannot read {word!r} in ZOO_SERVERS")
                continue
            listed[int(m[1])] = (m[2], int(m[3]), int(m[4]), int(m[5]))
        if sorted(listed) != list(IDS):
            err(f"{name}: ZOO_SERVERS lists ids {sorted(listed)}, want {list(IDS)}")
        servers[name] = listed
        for sid, (host, qp, ep, cp) in listed.items():
            if host != f"zk{sid}":
                err(f"{name}: server.{sid} on host {host!r}, want 'zk{sid}'")
            # each container keeps the first of the harness's ports
            if qp != harness_ports["quorum"][0]:
                err(f"{name}: server.{sid} quorum port {qp}, harness "
                    f"recommends {harness_ports['quorum'][0]} (first of "
                    f"{harness_ports['quorum']})")
            if ep != harness_ports["election"][0]:
                err(f"{name}: server.{sid} election port {ep}, harness "
                    f"recommends {harness_ports['election'][0]} (first of "
                    f"{harness_ports['election']})")
            if cp != harness_ports["client"][0]:
                err(f"{name}: server.{sid} client port {cp}, harness "
                    f"recommends {harness_ports['client'][0]} (first of "
                    f"{harness_ports['client']})")
        # the client port, published on loopback as the harness's i-th port
        mine = listed.get(i)
        pubs = published(svc)
        want = ("127.0.0.1", harness_ports["client"][i - 1],
                mine[3] if mine else harness_ports["client"][0])
        if pubs != [want]:
            err(f"{name}: publishes {pubs}, want exactly [{want}] "
                f"(harness ZKH_ENSEMBLE_CLIENT_PORTS {harness_ports['client']})")
        # zoo.cfg settings
        cfg = zoo_cfg(env)
        for key, value in harness_cfg.items():
            if key in BY_DESIGN:
                continue
            if key not in cfg:
                err(f"{name}: {key}={value} in the harness's zoo.cfg, "
                    f"not set in the compose file")
            elif cfg[key] != value:
                err(f"{name}: {key}={cfg[key]}, harness {key}={value}")
        for key in cfg:
            if key not in harness_cfg and key != "standaloneEnabled":
                err(f"{name}: {key}={cfg[key]} is not in the harness's zoo.cfg")
    if len({repr(sorted(s.items())) for s in servers.values()}) > 1:
        err("zk1..zk3 do not list the same ZOO_SERVERS")

    hosts = ",".join(f"zk{i}:{harness_ports['client'][0]}" for i in IDS)
    tests = services.get("tests")
    if tests is None:
        err("no service tests")
    else:
        got = env_of(tests).get("ZKL_TEST_HOSTS")
        if got != hosts:
            err(f"tests: ZKL_TEST_HOSTS {got!r}, want {hosts!r}")
        cmd = tests.get("command") or []
        if "tests/integration/itest.zk" not in " ".join(map(str, cmd)):
            err(f"tests: command {cmd!r} does not run tests/integration/itest.zk")
    ids = []
    for name, svc in services.items():
        cmd = svc.get("command") or []
        if isinstance(cmd, str):
            cmd = cmd.split()
        cmd = [str(c) for c in cmd]
        if not cmd or not cmd[0].endswith("zkl-election-demo"):
            continue
        if "-s" not in cmd or cmd[cmd.index("-s") + 1] != hosts:
            err(f"{name}: zkl-election-demo not given -s {hosts}: {cmd!r}")
        args = [c for j, c in enumerate(cmd[1:], 1)
                if not c.startswith("-") and cmd[j - 1] not in ("-s", "-t")]
        if args:
            ids.append(args[0])
    if len(set(ids)) != 3:
        err(f"want three election demo candidates with distinct ids, found {ids}")
    for name in ["tests"] + [n for n in services if n.startswith("demo")]:
        deps = (services.get(name) or {}).get("depends_on") or {}
        if any(f"zk{i}" not in deps for i in IDS):
            err(f"{name}: does not depend on zk1, zk2 and zk3")
    return errors


errors = check(compose, harness_cfg, harness_ports)
for e in errors:
    print("FAIL:", e)
if errors:
    print(f"0 passed, 1 failed ({len(errors)} mismatches)")
    sys.exit(1)
print("ok: docker-compose.yml matches tests/zkharness.sh")


# The checker must notice a change made on one side only.
def alter_compose(fn):
    c = copy.deepcopy(compose)
    fn(c["services"])
    return c


def env_set(svc, key, value):
    env = svc["environment"]
    if isinstance(env, list):
        svc["environment"] = env = env_of(svc)
    env[key] = value


mutants = {
    "compose tickTime": (alter_compose(
        lambda s: [env_set(s[f"zk{i}"], "ZOO_TICK_TIME", "2000") for i in IDS]),
        harness_cfg, harness_ports),
    "compose ZOO_MY_ID": (alter_compose(
        lambda s: env_set(s["zk2"], "ZOO_MY_ID", "5")),
        harness_cfg, harness_ports),
    "compose published port": (alter_compose(
        lambda s: s["zk3"].__setitem__("ports", ["127.0.0.1:2184:2181"])),
        harness_cfg, harness_ports),
    "compose quorum port": (alter_compose(
        lambda s: [env_set(s[f"zk{i}"], "ZOO_SERVERS",
                           env_of(s[f"zk{i}"])["ZOO_SERVERS"].replace(":2888:", ":2999:"))
                   for i in IDS]),
        harness_cfg, harness_ports),
    "compose forceSync": (alter_compose(
        lambda s: [env_set(s[f"zk{i}"], "ZOO_CFG_EXTRA",
                           "minSessionTimeout=1000 maxSessionTimeout=60000")
                   for i in IDS]),
        harness_cfg, harness_ports),
    "harness tickTime": (compose, dict(harness_cfg, tickTime="1000"),
                         harness_ports),
    "harness new zoo.cfg line": (compose, dict(harness_cfg, snapCount="1000"),
                                 harness_ports),
    "harness client ports": (compose, harness_cfg,
                             dict(harness_ports, client=[12181, 12182, 12183])),
    "harness election ports": (compose, harness_cfg,
                               dict(harness_ports, election=[13888, 13889, 13890])),
}
blind = [what for what, args in mutants.items() if not check(*args)]
if blind:
    print("FAIL: the checker does not notice:", ", ".join(blind))
    print("0 passed, 1 failed")
    sys.exit(1)
print(f"ok: the checker notices {len(mutants)} one-sided changes")
print("1 passed, 0 failed")
PY
