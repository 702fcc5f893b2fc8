"""The checks of scripts/deploy-check that read more than one deploy file.

    deploy_check.py static BIN       the wiring between deploy/'s files
                                     (what a schema cannot see), and their
                                     hook files through `BIN validate`
    deploy_check.py smoke BIN DIR    the documented set-ups run against
                                     BIN, in the empty directory DIR: as
                                     root inside `unshare --net --mount`
                                     (scripts/deploy-check does)

`smoke` runs, for compose.yaml and for kubernetes.yaml, what their
containers would run: the trust step, then `serve` with the Dockerfile's
ENTRYPOINT and the file's command or args, as the image's (or the pod's)
user, with the image's environment, the files mounted where the set-up
mounts them (the organisation's layer really at /etc/wasm-hooks, through
an overlay of /etc private to this mount namespace), the trust store
read-only for `serve`. Then it sends what agents, probes and Prometheus
send: a Claude Code PreToolUse event with the bearer token to POST /hook,
GET /health and /ready, and a real Prometheus with deploy/prometheus.yml
scraping /metrics (its `wasm-hooks` target resolved to 127.0.0.1 by the
same overlay's /etc/hosts, its token file at /run/secrets). Three paths
differ from the container's, in DIR instead: /project, which cannot be
made here without writing to / (every argument naming it is rewritten),
and the image's HOME and XDG_STATE_HOME (given through the environment,
as the image's ENV gives them). Everything listens and connects on this
network namespace's loopback alone.

Needs PyYAML and dockerfile-parse (scripts/deploy-check's venv).
"""

import http.client
import json
import os
import re
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import yaml
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def ok(message):
    print(f"ok: {message}", flush=True)


# ---------------------------------------------------------------- reading


def dockerfile():
    """The runtime stage of deploy/Dockerfile: its USER, ENV, ENTRYPOINT,
    and whether it installs CA certificates."""
    parser = DockerfileParser(path=str(DEPLOY / "Dockerfile"))
    stages = []
    for item in parser.structure:
        if item["instruction"] == "FROM":
            stages.append([])
        elif stages:
            stages[-1].append(item)
    check(stages, "Dockerfile: no FROM")
    final = stages[-1]
    users = [i["value"].strip() for i in final if i["instruction"] == "USER"]
    check(users, "Dockerfile: the runtime stage sets no USER (it would run as root)")
    match = re.fullmatch(r"(\d+)(?::(\d+))?", users[-1])
    check(
        match,
        f"Dockerfile: USER {users[-1]} is not numeric (UID or UID:GID): the kubelet "
        "cannot verify runAsNonRoot against a name",
    )
    uid = int(match.group(1))
    gid = int(match.group(2) or match.group(1))
    check(uid != 0, "Dockerfile: USER is root")
    runs = " ".join(i["value"] for i in final if i["instruction"] == "RUN")
    check(
        re.search(r"apt-get install[^&;|]*\bca-certificates\b", runs),
        "Dockerfile: the runtime stage does not install ca-certificates (TLS to "
        "OCI registries, HTTP hooks, OTLP collectors)",
    )
    entrypoints = [i["value"] for i in final if i["instruction"] == "ENTRYPOINT"]
    check(entrypoints, "Dockerfile: no ENTRYPOINT")
    try:
        entrypoint = json.loads(entrypoints[-1])
    except ValueError:
        raise Failed("Dockerfile: the ENTRYPOINT is not in exec (JSON) form")
    env = dict(parser.envs)
    for var in ("HOME", "XDG_STATE_HOME"):
        check(var in env, f"Dockerfile: ENV sets no {var} (where the trust store is)")
    return {"uid": uid, "gid": gid, "env": env, "entrypoint": entrypoint}


def serve_options(argv):
    """The options of a `wasm-hooks serve` command line that matter here."""
    check(argv[:2] == ["wasm-hooks", "serve"], f"not a `wasm-hooks serve`: {argv}")
    options = {"allow_hosts": [], "projects": []}
    names = {
        "--listen": "listen",
        "--token-env": "token_env",
        "--project": "projects",
        "--allow-host": "allow_hosts",
    }
    i = 2
    while i < len(argv):
        name = names.get(argv[i])
        if name and i + 1 < len(argv):
            if isinstance(options.get(name), list):
                options[name].append(argv[i + 1])
            else:
                options[name] = argv[i + 1]
            i += 2
        else:
            i += 1
    check(options.get("listen"), f"serve: no --listen in {argv}")
    check(options.get("token_env"), f"serve: no --token-env in {argv}")
    check(len(options["projects"]) == 1, f"serve: not one --project in {argv}")
    options["project"] = options["projects"][0]
    options["port"] = int(options["listen"].rsplit(":", 1)[1])
    return options


def trust_project(argv):
    """The project a `wasm-hooks trust --yes --project-dir DIR` trusts."""
    check(
        argv[:2] == ["wasm-hooks", "trust"] and "--yes" in argv and "--project-dir" in argv,
        f"not a `wasm-hooks trust --yes --project-dir DIR`: {argv}",
    )
    return argv[argv.index("--project-dir") + 1]


def under(path, directory):
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def compose_volumes(service):
    """A compose service's volumes: (source, target, read_only)."""
    volumes = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            volumes.append((volume["source"], volume["target"], bool(volume.get("read_only"))))
        else:
            parts = volume.split(":")
            mode = parts[2] if len(parts) > 2 else ""
            volumes.append((parts[0], parts[1], "ro" in mode.split(",")))
    return volumes


def credential_files(prometheus):
    """Every file a scrape job of prometheus.yml reads a secret from."""
    files = []
    for job in prometheus.get("scrape_configs", []):
        auth = job.get("authorization") or {}
        basic = job.get("basic_auth") or {}
        oauth = job.get("oauth2") or {}
        for path in (
            auth.get("credentials_file"),
            job.get("bearer_token_file"),
            basic.get("password_file"),
            oauth.get("client_secret_file"),
        ):
            if path:
                files.append((job["job_name"], path))
    return files


def hook_rule(path_or_text):
    """The first inline rule of a hook file (path, or its text): what the
    smoke test sends, and the reason it expects back."""
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    for groups in json.loads(text)["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                for rule in hook.get("rules", []):
                    if rule.get("action") == "deny" and rule.get("operator") == "contains":
                        return rule["value"], rule["reason"]
    raise Failed("a hook file with no `contains` deny rule to send an event for")


def load_all():
    image = dockerfile()
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    kube = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d]
    return image, compose, prometheus, kube


# ---------------------------------------------------------------- static


def static_compose(image, compose, prometheus):
    services = compose.get("services", {})
    for name in ("trust", "wasm-hooks", "prometheus"):
        check(name in services, f"compose: no `{name}` service")
    serve_svc, trust_svc, prom_svc = (
        services["wasm-hooks"],
        services["trust"],
        services["prometheus"],
    )
    check("entrypoint" not in serve_svc, "compose: wasm-hooks overrides the image's ENTRYPOINT")
    serve = serve_options(image["entrypoint"] + serve_svc.get("command", []))
    project = serve["project"]
    env = serve_svc.get("environment", {})
    check(serve["token_env"] in env, f"compose: wasm-hooks is not given {serve['token_env']}")

    depends = serve_svc.get("depends_on", {})
    check(
        isinstance(depends, dict)
        and (depends.get("trust") or {}).get("condition") == "service_completed_successfully",
        "compose: wasm-hooks does not wait for `trust` (depends_on: condition: "
        "service_completed_successfully)",
    )
    check(
        trust_project(trust_svc.get("entrypoint", [])) == project,
        f"compose: `trust` does not trust the project serve serves ({project})",
    )
    state = image["env"]["XDG_STATE_HOME"]
    serve_vols, trust_vols = compose_volumes(serve_svc), compose_volumes(trust_svc)
    in_project = lambda vols: sorted((s, t) for s, t, _ in vols if under(t, project))
    check(
        in_project(serve_vols) == in_project(trust_vols),
        "compose: `trust` and wasm-hooks do not mount the same project files at the "
        "same paths (a trust record names real paths)",
    )
    state_of = lambda vols: [(s, ro) for s, t, ro in vols if t == state]
    check(state_of(trust_vols), f"compose: `trust` mounts nothing at {state} (the trust store)")
    check(
        [s for s, _ in state_of(serve_vols)] == [s for s, _ in state_of(trust_vols)],
        f"compose: wasm-hooks does not mount the trust store `trust` wrote ({state})",
    )
    check(not state_of(trust_vols)[0][1], "compose: `trust` mounts the trust store read-only")
    declared = compose.get("volumes") or {}
    for source, _ in state_of(serve_vols):
        check(source in declared, f"compose: volume `{source}` is not declared")
    for source, target, _ in serve_vols + trust_vols:
        if source.startswith((".", "/")):
            check((DEPLOY / source).exists(), f"compose: {source} (mounted at {target}) is missing")
    check(
        any(t == "/etc/wasm-hooks" for _, t, _ in serve_vols),
        "compose: no fleet hook file at /etc/wasm-hooks (the organisation's layer, which "
        "answers events from every cwd)",
    )

    # Prometheus: each token file prometheus.yml reads reaches it, and each
    # target is answered by serve.
    provided = {t for _, t, _ in compose_volumes(prom_svc)}
    declared_secrets = compose.get("secrets") or {}
    for secret in prom_svc.get("secrets", []):
        source = secret if isinstance(secret, str) else secret["source"]
        target = source if isinstance(secret, str) else secret.get("target", source)
        check(source in declared_secrets, f"compose: secret `{source}` is not declared")
        provided.add(target if target.startswith("/") else f"/run/secrets/{target}")
    for job, path in credential_files(prometheus):
        check(
            path in provided,
            f"prometheus.yml: job {job} reads {path}, which compose mounts nowhere in the "
            "prometheus service (a volume or a secret)",
        )
    allowed = serve["allow_hosts"]
    for job in prometheus.get("scrape_configs", []):
        for static in job.get("static_configs", []):
            for target in static.get("targets", []):
                host, port = target.rsplit(":", 1)
                check(host in services, f"prometheus.yml: target {target} is no compose service")
                check(int(port) == serve["port"], f"prometheus.yml: {target} is not serve's port")
                check(
                    host in allowed or target in allowed,
                    f"prometheus.yml: serve answers no Host {target} (--allow-host)",
                )
    ok("compose.yaml and prometheus.yml: trust before serve on the same paths, the token "
       "file reaches Prometheus, its targets are answered")
    return serve


def effective(pod, container, key):
    value = (container.get("securityContext") or {}).get(key)
    return value if value is not None else (pod.get("securityContext") or {}).get(key)


def static_kubernetes(image, kube):
    kinds = {}
    for doc in kube:
        kinds.setdefault(doc["kind"], []).append(doc)
    check(len(kinds.get("Deployment", [])) == 1, "kubernetes: not one Deployment")
    deployment = kinds["Deployment"][0]
    pod = deployment["spec"]["template"]["spec"]
    config_maps = {c["metadata"]["name"] for c in kinds.get("ConfigMap", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    containers = pod.get("containers", [])
    inits = pod.get("initContainers", [])
    for container in inits + containers:
        name = container["name"]
        if effective(pod, container, "runAsNonRoot"):
            uid = effective(pod, container, "runAsUser")
            check(
                uid is None or (isinstance(uid, int) and uid > 0),
                f"kubernetes: {name}: runAsUser {uid!r} is not a non-root UID",
            )
            # With no runAsUser the kubelet reads the image's USER, which
            # dockerfile() already found numeric and not root.
        for mount in container.get("volumeMounts", []):
            check(mount["name"] in volumes, f"kubernetes: {name} mounts undeclared volume {mount['name']}")
    for name, volume in volumes.items():
        if "configMap" in volume:
            check(
                volume["configMap"]["name"] in config_maps,
                f"kubernetes: volume {name} names ConfigMap {volume['configMap']['name']}, not in the file",
            )
    serving = [c for c in containers if "command" not in c]
    check(len(serving) == 1, "kubernetes: not one container running the image's ENTRYPOINT")
    serve_c = serving[0]
    serve = serve_options(image["entrypoint"] + serve_c.get("args", []))
    project, state = serve["project"], image["env"]["XDG_STATE_HOME"]
    env = {e["name"]: e for e in serve_c.get("env", [])}
    check(
        "secretKeyRef" in (env.get(serve["token_env"], {}).get("valueFrom") or {}),
        f"kubernetes: {serve['token_env']} does not come from a Secret",
    )
    mounts = {m["mountPath"]: m for m in serve_c.get("volumeMounts", [])}
    check("/etc/wasm-hooks" in mounts, "kubernetes: no fleet hook file at /etc/wasm-hooks")
    project_mounts = sorted((p, m["name"]) for p, m in mounts.items() if under(p, project))
    if project_mounts:
        trusting = [c for c in inits if "trust" in c.get("command", [])]
        check(trusting, "kubernetes: the served project's files are mounted but no init container trusts them")
        init = trusting[0]
        check(trust_project(init["command"]) == project, f"kubernetes: the init container does not trust {project}")
        init_mounts = {m["mountPath"]: m for m in init.get("volumeMounts", [])}
        check(
            project_mounts == sorted((p, m["name"]) for p, m in init_mounts.items() if under(p, project)),
            "kubernetes: the init container and serve do not mount the same project files at the same paths",
        )
        check(state in init_mounts and not init_mounts[state].get("readOnly"),
              f"kubernetes: the init container does not write the trust store at {state}")
        check(state in mounts and mounts[state]["name"] == init_mounts[state]["name"],
              f"kubernetes: serve does not mount the trust store the init container wrote ({state})")
        check(mounts[state].get("readOnly"), "kubernetes: serve's trust store is not read-only")
    ports = {p.get("name"): p["containerPort"] for p in serve_c.get("ports", [])}
    for probe, path in (("livenessProbe", "/health"), ("readinessProbe", "/ready")):
        get = (serve_c.get(probe) or {}).get("httpGet") or {}
        check(get.get("path") == path, f"kubernetes: {probe} is not GET {path}")
        port = ports.get(get.get("port"), get.get("port"))
        check(port == serve["port"], f"kubernetes: {probe} is not on serve's port {serve['port']}")
    for service in kinds.get("Service", []):
        name = service["metadata"]["name"]
        check(name in serve["allow_hosts"], f"kubernetes: serve answers no Host {name} (--allow-host)")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            check(ports.get(target, target) == serve["port"], f"kubernetes: Service {name} targets no serve port")
    ok("kubernetes.yaml: non-root by UID, every volume declared, the project trusted by the init "
       "container on the same paths, probes and Service on serve's port")
    return serve


def static(binary):
    image, compose, prometheus, kube = load_all()
    ok(f"Dockerfile: USER {image['uid']}:{image['gid']} (numeric), ca-certificates installed, "
       f"XDG_STATE_HOME={image['env']['XDG_STATE_HOME']}")
    static_compose(image, compose, prometheus)
    static_kubernetes(image, kube)
    # The hook files, as `wasm-hooks validate` reads them: compose's, and the
    # ConfigMaps' text.
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(str(p) for p in DEPLOY.glob("*-hooks/hooks.*"))
        for doc in kube:
            if doc["kind"] == "ConfigMap":
                for key, text in doc.get("data", {}).items():
                    if key.startswith("hooks."):
                        path = Path(tmp) / doc["metadata"]["name"] / key
                        path.parent.mkdir()
                        path.write_text(text)
                        files.append(str(path))
        run = subprocess.run([binary, "validate", *files], capture_output=True, text=True, cwd=tmp)
        check(run.returncode == 0, f"wasm-hooks validate:\n{run.stdout}{run.stderr}")
        ok(f"wasm-hooks validate: {run.stdout.strip()} (deploy/*-hooks and the ConfigMaps)")


# ---------------------------------------------------------------- smoke


class Smoke:
    def __init__(self, binary, tmp):
        self.image, self.compose, self.prometheus, self.kube = load_all()
        self.tmp = Path(tmp)
        check(self.tmp.is_dir() and not any(self.tmp.iterdir()), f"smoke: {tmp} is not an empty directory")
        self.tmp.chmod(0o755)
        self.bin_dir = self.tmp / "bin"
        self.bin_dir.mkdir()
        # `wasm-hooks`, found on PATH as in the image (/usr/local/bin), and
        # where the image's user can run it whatever the checkout's modes.
        shutil.copy2(binary, self.bin_dir / "wasm-hooks")
        self.token = secrets.token_hex(32)
        self.children = []

    # -- the namespace

    def sh(self, *argv):
        subprocess.run(argv, check=True)

    def prepare_namespace(self):
        self.sh("ip", "link", "set", "lo", "up")
        # /etc: an overlay, so that /etc/wasm-hooks and /etc/hosts can be
        # what the container has without touching the machine's.
        up, work = self.tmp / "etc-up", self.tmp / "etc-work"
        up.mkdir()
        work.mkdir()
        self.sh("mount", "-t", "overlay", "overlay", "-o",
                f"lowerdir=/etc,upperdir={up},workdir={work}", "/etc")
        check(os.path.ismount("/etc"), "smoke: /etc is not the overlay")
        shutil.rmtree("/etc/wasm-hooks", ignore_errors=True)
        Path("/etc/wasm-hooks").mkdir(mode=0o755)
        with open("/etc/hosts", "a") as hosts:
            hosts.write("\n127.0.0.1 wasm-hooks\n")
        # /run/secrets, where compose puts the Prometheus token.
        self.sh("mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run")
        Path("/run/secrets").mkdir()

    # -- processes as the container runs them

    def user_env(self, paths, extra):
        env = {"PATH": f"{self.bin_dir}:/usr/local/bin:/usr/bin:/bin"}
        for key, value in self.image["env"].items():
            env[key] = self.host_path(value, paths)
        env.update(extra)
        return env

    @staticmethod
    def host_path(value, paths):
        for inside in sorted(paths, key=len, reverse=True):
            if under(value, inside):
                return str(paths[inside]) + value[len(inside):]
        return value

    def as_user(self, argv, uid, gid, read_only=()):
        argv = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *argv]
        if read_only:
            # A mount namespace of its own, with these read-only (`:ro`,
            # readOnly: true), while the trust step writes to the same
            # directory in its own.
            script = " && ".join(f'mount -o bind,ro "${i + 1}" "${i + 1}"' for i in range(len(read_only)))
            argv = ["unshare", "--mount", "--", "sh", "-c",
                    f'{script} && shift {len(read_only)} && exec "$@"', "sh",
                    *map(str, read_only), *argv]
        return argv

    def run_step(self, argv, env, what):
        run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        check(run.returncode == 0, f"{what} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        return run.stdout + run.stderr

    def start(self, argv, env, what):
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True)
        self.children.append(child)
        selector = selectors.DefaultSelector()
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=30):
            raise Failed(f"{what}: said nothing in 30 s")
        line = child.stdout.readline()
        check(line.startswith("listening on "),
              f"{what}: {line!r} {child.stderr.read() if child.poll() is not None else ''}")
        return child

    def stop(self, child, grace, what):
        child.send_signal(signal.SIGTERM)
        try:
            code = child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            child.kill()
            raise Failed(f"{what}: still running {grace} s after SIGTERM (the grace period)")
        check(code == 0, f"{what}: exited {code} after SIGTERM:\n{child.stderr.read()}")
        self.children.remove(child)

    # -- what clients send

    @staticmethod
    def request(address, method, path, host, body=None, token=None):
        """`method path` to address (IP:PORT), addressed to `host`."""
        connection = http.client.HTTPConnection(address, timeout=10)
        headers = {"Host": host}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read().decode()
        connection.close()
        return response.status, data

    def decide(self, address, host, cwd, command, token):
        event = {"session_id": "deploy-check", "cwd": cwd, "hook_event_name": "PreToolUse",
                 "tool_name": "Bash", "tool_input": {"command": command}}
        status, body = self.request(address, "POST", "/hook", host, event, token)
        check(status == 200, f"POST /hook ({host}): {status} {body}")
        output = json.loads(body).get("hookSpecificOutput") or {}
        return output.get("permissionDecision", "allow"), output.get("permissionDecisionReason", "")

    def expect_guarded(self, address, host, project_cwd, label):
        """The fleet's rule from an agent's own checkout, the project's from
        the project; a harmless command passes; no token is a block."""
        fleet_value, fleet_reason = self.fleet_rule
        decision = self.decide(address, host, "/home/dev/repo", fleet_value, self.token)
        check(decision == ("deny", fleet_reason),
              f"{label}: `{fleet_value}` from an agent's checkout: {decision}, not a deny "
              f"for {fleet_reason!r} (the organisation's layer)")
        ok(f"{label}: POST /hook (Host {host}) `{fleet_value}` from /home/dev/repo: deny, {fleet_reason!r}")
        value, reason = self.project_rule
        decision = self.decide(address, host, project_cwd, value, self.token)
        check(decision == ("deny", reason),
              f"{label}: `{value}` from the project: {decision}, not a deny for {reason!r} "
              "as the trusted project's")
        ok(f"{label}: `{value}` from the project: deny, {reason!r} (its hooks trusted)")
        decision = self.decide(address, host, "/home/dev/repo", "ls", self.token)
        check(decision[0] != "deny", f"{label}: `ls` was denied: {decision}")
        decision = self.decide(address, host, "/home/dev/repo", "ls", None)
        check(decision[0] == "deny", f"{label}: an event with no token was not blocked: {decision}")
        ok(f"{label}: `ls` passes; an event without the token is blocked ({decision[1][:60]}…)")

    # -- the set-ups

    def read_rules(self, project):
        """What to send, and expect, as laid out: the fleet's rule (the
        organisation's layer) and the project's."""
        self.fleet_rule = hook_rule(next(Path("/etc/wasm-hooks").glob("hooks.*")))
        self.project_rule = hook_rule(next(project.glob(".wasm-hooks/hooks.*")))

    def lay_out(self, root, mounts):
        """Mount (source dir, target) read-only at `root` + target, or at
        target itself for /etc."""
        for source, target in mounts:
            where = Path(target) if target.startswith("/etc/") else Path(str(root) + target)
            where.mkdir(parents=True, exist_ok=True)
            self.sh("mount", "--bind", "-o", "ro", str(source), str(where))

    def user_dirs(self, root, uid, gid, state_mode=0o700, state_owner=None):
        home, state = root / "home", root / "state"
        home.mkdir(parents=True)
        state.mkdir()
        os.chown(home, uid, gid)
        os.chown(state, *(state_owner or (uid, gid)))
        state.chmod(state_mode)
        return home, state

    def compose_setup(self):
        image, compose = self.image, self.compose
        services = compose["services"]
        uid, gid = image["uid"], image["gid"]
        serve_argv = image["entrypoint"] + services["wasm-hooks"].get("command", [])
        serve = serve_options(serve_argv)
        project = serve["project"]
        state_in = image["env"]["XDG_STATE_HOME"]
        root = self.tmp / "compose"
        home, state = self.user_dirs(root, uid, gid)
        paths = {project: root / "project", image["env"]["HOME"]: home, state_in: state}
        mounts = [(DEPLOY / s, t) for s, t, _ in compose_volumes(services["wasm-hooks"])
                  if s.startswith((".", "/"))]
        self.lay_out(root, mounts)
        self.read_rules(root / "project")
        # Its token file, made as the comment says: umask 022.
        token_file = Path("/run/secrets") / next(
            (s if isinstance(s, str) else s.get("target", s["source"]))
            for s in services["prometheus"].get("secrets", []))
        token_file.write_text(self.token + "\n")
        token_file.chmod(0o644)
        env = self.user_env(paths, {serve["token_env"]: self.token})
        map_args = lambda argv: [self.host_path(a, paths) for a in argv]
        return {
            "root": root, "paths": paths, "env": env, "uid": uid, "gid": gid, "state": state,
            "serve": map_args(serve_argv),
            "trust": map_args(services["trust"]["entrypoint"]),
            "project": root / "project", "port": serve["port"],
        }

    def compose_flow(self):
        setup = self.compose_setup()
        uid, gid, env, state = setup["uid"], setup["gid"], setup["env"], setup["state"]
        services = self.compose["services"]
        label = "compose"

        # Before the trust step (the control): the project's inline hook
        # answers as an untrusted project's; `docker compose run --rm trust`
        # then makes the running serve answer as a trusted one.
        child = self.start(self.as_user(setup["serve"], uid, gid, [state]), env, f"{label} serve")
        value, reason = self.project_rule
        published = f"127.0.0.1:{setup['port']}"
        decision = self.decide(published, published, str(setup["project"]), value, self.token)
        check(decision[0] == "deny" and decision[1].startswith("[from the untrusted project's hook"),
              f"{label}: before the trust step, the project's answer was {decision}")
        ok(f"{label}: untrusted, the project's hook answers as an untrusted project's ({decision[1][:45]}…)")
        out = self.run_step(self.as_user(setup["trust"], uid, gid), env, f"{label} trust step")
        check("trusted " in out, f"{label} trust step said: {out}")
        ok(f"{label}: the `trust` service's command, as {uid}:{gid}: {out.strip().splitlines()[-1][:70]}…")
        self.expect_guarded(published, published, str(setup["project"]), f"{label} (published port)")

        # The health check, as compose runs it in the container.
        test = services["wasm-hooks"]["healthcheck"]["test"]
        check(test[0] == "CMD", f"{label}: the health check is not a CMD")
        self.run_step(self.as_user(test[1:], uid, gid), env, f"{label} health check")
        ok(f"{label}: the health check ({' '.join(test[1:3])} …) passes")

        # Prometheus's scrape, as prometheus.yml says, with the secret file.
        for job, path in credential_files(self.prometheus):
            token = Path(path).read_text().strip()
            for static_config in next(j for j in self.prometheus["scrape_configs"]
                                      if j["job_name"] == job)["static_configs"]:
                for target in static_config["targets"]:
                    status, body = self.request(published, "GET", "/metrics", target, token=token)
                    check(status == 200 and "wasm_hooks_events_total" in body,
                          f"{label}: GET /metrics as Prometheus (Host {target}): {status} {body[:200]}")
                    metrics = self.tmp / "metrics.txt"
                    metrics.write_text(body)
                    run = subprocess.run(["promtool", "check", "metrics"], stdin=metrics.open(),
                                         capture_output=True, text=True)
                    check(run.returncode == 0, f"promtool check metrics: {run.stdout}{run.stderr}")
                    ok(f"{label}: GET /metrics with {path}, Host {target}: 200, promtool check metrics accepts it")
        status, _ = self.request(published, "GET", "/metrics", published)
        check(status != 200, f"{label}: /metrics answered without the token")

        run = subprocess.run(["promtool", "check", "config", str(DEPLOY / "prometheus.yml")],
                             capture_output=True, text=True)
        check(run.returncode == 0, f"promtool check config:\n{run.stdout}{run.stderr}")
        ok("promtool check config deploy/prometheus.yml (its token file where compose mounts it)")
        self.real_prometheus(label)

        grace = services["wasm-hooks"].get("stop_grace_period", "10s")
        self.stop(child, int(str(grace).rstrip("s")), f"{label} serve")
        ok(f"{label}: serve exits 0 on SIGTERM within stop_grace_period ({grace})")

    def real_prometheus(self, label):
        storage = self.tmp / "prometheus"
        storage.mkdir()
        os.chown(storage, 65534, 65534)
        config = self.tmp / "prometheus.yml"
        shutil.copy(DEPLOY / "prometheus.yml", config)
        config.chmod(0o644)
        child = subprocess.Popen(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
             "prometheus", f"--config.file={config}", f"--storage.tsdb.path={storage}",
             "--web.listen-address=127.0.0.1:9090"],
            stdout=subprocess.DEVNULL, stderr=(self.tmp / "prometheus.log").open("w"),
            stdin=subprocess.DEVNULL)
        self.children.append(child)
        query = lambda q: self.request("127.0.0.1:9090", "GET",
                                       "/api/v1/query?query=" + urllib.parse.quote(q), "127.0.0.1:9090")
        deadline, up = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            check(child.poll() is None, f"prometheus exited: {(self.tmp / 'prometheus.log').read_text()[-2000:]}")
            try:
                status, body = query('up{job="wasm-hooks"}')
                result = json.loads(body)["data"]["result"] if status == 200 else []
                up = result[0]["value"][1] if result else None
            except (OSError, ValueError, KeyError):
                up = None
            if up == "1":
                break
            time.sleep(0.5)
        if up != "1":
            _, targets = self.request("127.0.0.1:9090", "GET", "/api/v1/targets", "127.0.0.1:9090")
            raise Failed(f"{label}: Prometheus never scraped wasm-hooks: up={up}, targets: {targets[:600]}")
        status, body = query('sum(wasm_hooks_events_total{verdict="deny"})')
        denies = json.loads(body)["data"]["result"]
        check(denies and float(denies[0]["value"][1]) > 0, f"{label}: Prometheus has no deny counted: {body}")
        ok(f"{label}: Prometheus {self.prometheus_version()} with prometheus.yml as nobody: "
           f"up{{job=\"wasm-hooks\"}} = 1, {denies[0]['value'][1]} denies scraped")
        child.terminate()
        child.wait(timeout=10)
        self.children.remove(child)

    @staticmethod
    def prometheus_version():
        out = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
        return (out.stdout + out.stderr).split()[2]

    def kubelet_config_map(self, root, name):
        """A ConfigMap's files as the kubelet writes them: a timestamped
        directory, `..data` pointing at it, each key a link through it."""
        doc = next(d for d in self.kube if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name)
        volume = root / f"configmap-{name}"
        stamp = volume / "..2026_01_01_00_00_00.000000001"
        stamp.mkdir(parents=True)
        for key, text in doc["data"].items():
            (stamp / key).write_text(text)
            (stamp / key).chmod(0o644)
            os.symlink(f"..data/{key}", volume / key)
        os.symlink(stamp.name, volume / "..data")
        return volume

    def kubernetes_flow(self):
        image = self.image
        deployment = next(d for d in self.kube if d["kind"] == "Deployment")
        pod = deployment["spec"]["template"]["spec"]
        serve_c = next(c for c in pod["containers"] if "command" not in c)
        init = next(c for c in pod.get("initContainers", []) if "trust" in c.get("command", []))
        label = "kubernetes"
        pod_ip = "127.0.0.2"
        uid = effective(pod, serve_c, "runAsUser") or image["uid"]
        gid = effective(pod, serve_c, "runAsGroup") or image["gid"]
        fs_group = (pod.get("securityContext") or {}).get("fsGroup")
        root = self.tmp / "kubernetes"
        env_values = {"POD_IP": pod_ip}
        for var in serve_c.get("env", []):
            if "secretKeyRef" in (var.get("valueFrom") or {}):
                env_values[var["name"]] = self.token
        expand = lambda arg: re.sub(r"\$\((\w+)\)", lambda m: env_values.get(m.group(1), m.group(0)), arg)
        serve_argv = image["entrypoint"] + [expand(a) for a in serve_c.get("args", [])]
        serve = serve_options(serve_argv)
        project, state_in = serve["project"], image["env"]["XDG_STATE_HOME"]
        # emptyDir: world-writable, or the fsGroup's (setgid) with one.
        home, state = self.user_dirs(
            root, uid, gid, state_mode=0o2777 if fs_group else 0o777,
            state_owner=(0, fs_group or 0))
        paths = {project: root / "project", image["env"]["HOME"]: home, state_in: state}
        volumes = {v["name"]: v for v in pod["volumes"]}
        # The compose set-up's mount at /etc/wasm-hooks goes first.
        subprocess.run(["umount", "/etc/wasm-hooks"], check=False)
        mounts = []
        for mount in serve_c["volumeMounts"]:
            volume = volumes[mount["name"]]
            if "configMap" in volume:
                mounts.append((self.kubelet_config_map(root, volume["configMap"]["name"]), mount["mountPath"]))
        self.lay_out(root, mounts)
        self.read_rules(root / "project")
        env = self.user_env(paths, env_values)
        map_args = lambda argv: [self.host_path(a, paths) for a in argv]
        out = self.run_step(self.as_user(map_args(init["command"]), uid, gid), env, f"{label} init container")
        check("trusted " in out, f"{label} init container said: {out}")
        ok(f"{label}: the `trust` init container's command, as {uid}:{gid}: {out.strip().splitlines()[-1][:60]}…")
        child = self.start(self.as_user(map_args(serve_argv), uid, gid, [state]), env, f"{label} serve")
        pod_address = f"{pod_ip}:{serve['port']}"
        for probe in ("livenessProbe", "readinessProbe"):
            path = serve_c[probe]["httpGet"]["path"]
            status, body = self.request(pod_address, "GET", path, pod_address)
            check(status == 200, f"{label}: {probe} GET {path} (Host {pod_ip}:8787): {status} {body}")
            ok(f"{label}: {probe} GET {path} at the pod's address: 200 {body.strip()}")
        service = next(d for d in self.kube if d["kind"] == "Service")["metadata"]["name"]
        self.expect_guarded(pod_address, f"{service}:{serve['port']}", str(root / "project"), f"{label} (Service)")
        status, body = self.request(pod_address, "GET", "/metrics", pod_address, token=self.token)
        check(status == 200 and "wasm_hooks_events_total" in body,
              f"{label}: GET /metrics at the pod's address with the token: {status}")
        ok(f"{label}: GET /metrics at the pod's address (the annotations' scrape) with the token: 200")
        grace = pod.get("terminationGracePeriodSeconds", 30)
        self.stop(child, grace, f"{label} serve")
        ok(f"{label}: serve exits 0 on SIGTERM within terminationGracePeriodSeconds ({grace})")

    def run(self):
        try:
            self.prepare_namespace()
            self.compose_flow()
            self.kubernetes_flow()
        finally:
            for child in self.children:
                child.kill()
                child.wait()
            # self.tmp holds bind mounts of deploy/ (read-only) in this
            # namespace: scripts/deploy-check removes it once the namespace
            # is gone.


def main():
    what, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    try:
        if what == "static":
            static(binary)
        elif what == "smoke":
            check(os.getuid() == 0, "smoke: run as root in a network and mount namespace of its own")
            check(len(sys.argv) == 4, "usage: deploy_check.py smoke BIN EMPTY-DIR")
            Smoke(binary, sys.argv[3]).run()
        else:
            raise SystemExit(f"usage: {sys.argv[0]} static|smoke BIN")
    except Failed as failure:
        print(f"FAILED: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
