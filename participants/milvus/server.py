"""Starts the Milvus 2.3.5 standalone server of the `milvus` wheel (Embedded Milvus) for vecbench,
and stays its parent until it exits. Run by adapter.ts through the runner's spawnServer:

    python server.py DATA_DIR PORTS_JSON PASSWORD_FILE BIN_DIR fresh|existing

The wheel's own `milvus-server` command does the same but stops the server with SIGKILL one
second after SIGTERM (its etcd sessions then outlive it, and a restart on the data waits for
them to expire) and unpacks the binaries (about 250 MB) into every data directory. Here the
binaries are unpacked once, by provision.sh, into the virtual environment (BIN_DIR), and the
configuration is the wheel's own template (milvus/data/config.yaml.template) with vecbench's
ports, paths and authentication filled in.

A fresh server is born with the user root and the password "Milvus" (2.3 has no setting for
another): this process changes it to the one in PASSWORD_FILE before anything is reported
ready (the runner's health check logs in with it), while the ports are closed to every other
user and host (adapter.ts). SIGTERM or SIGINT is passed to the server, which shuts down cleanly
(its sessions removed, its data flushed); this process exits with it.
"""

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import milvus

DEFAULT_PASSWORD = "Milvus"
PR_SET_PDEATHSIG = 1
# Components that register an address in etcd: 127.0.0.1, so they reach each other on loopback.
COMPONENTS = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexNode", "dataCoord", "dataNode")


def log(message):
    print("vecbench milvus launcher: %s" % message, flush=True)


def write_config(data_dir, ports):
    """The wheel's template with every {{ placeholder }} filled, then vecbench's overrides."""
    template_dir = os.path.join(os.path.dirname(milvus.__file__), "data")
    with open(os.path.join(template_dir, "config.yaml.template"), encoding="utf-8") as f:
        text = f.read()
    storage = os.path.join(data_dir, "data")
    configs = os.path.join(data_dir, "configs")
    os.makedirs(storage, exist_ok=True)
    os.makedirs(configs, exist_ok=True)
    values = {
        "etcd_port": ports["etcd"],
        "etcd_log_level": "warn",
        "etcd_log_path": "stdout",
        "etcd_data_dir": os.path.join(storage, "etcd.data"),
        "local_storage_dir": storage,
        "rocksmq_data_dir": os.path.join(storage, "rocksmq"),
        "root_coord_port": ports["root_coord"],
        "proxy_port": ports["proxy"],
        "proxy_internal_port": ports["proxy_internal"],
        "query_coord_port": ports["query_coord"],
        "query_node_port": ports["query_node"],
        "index_coord_port": ports["index_coord"],
        "index_node_port": ports["index_node"],
        "data_coord_port": ports["data_coord"],
        "data_node_port": ports["data_node"],
        # "": no log file, the server logs to stdout (the runner's log file for this server).
        "system_log_path": "",
        "server_pem_path": "server.pem",
        "server_key_path": "server.key",
        "ca_pem_path": "ca.pem",
        "authorization_enabled": "true",
        "tls_mode": 0,
    }

    def fill(m):
        key = re.split(r"[(:]", m.group(1).strip())[0].strip()
        if key not in values:
            raise SystemExit("vecbench milvus launcher: the template asks %r, which vecbench does not fill" % key)
        return str(values[key])

    text = re.sub(r"\{\{(.*?)\}\}", fill, text)
    overrides = {"%s.ip" % c: "127.0.0.1" for c in COMPONENTS}
    overrides["log.level"] = "warn"
    # A stop that takes longer than this is forced by the server itself (its default: 30 minutes).
    overrides["common.gracefulStopTimeout"] = 60
    # Milvus 2.3.5 panics on its way out before it removes its etcd sessions, and a restart on the
    # data waits until they expire (the components register under the same keys): 10 s, not 30.
    overrides["common.session.ttl"] = 10
    # No background merging of small segments: it rebuilds their index behind the measurement's
    # back (a search after it answers from another graph). Deleted rows stay masked by delete logs.
    overrides["dataCoord.compaction.enableAutoCompaction"] = "false"
    cfg = milvus.MilvusServerConfig()
    cfg.extra_configs = overrides
    text = cfg.update_extra_configs(text)
    etcd_yaml = os.path.join(configs, "embedEtcd.yaml")
    # The embedded etcd listens where its own configuration says, on 127.0.0.1, not on etcd's
    # defaults (localhost:2379 and :2380, which a second server would find taken).
    text = text.replace("\netcd:\n", "\netcd:\n  config:\n    path: %s\n" % etcd_yaml, 1)
    with open(os.path.join(configs, "milvus.yaml"), "w", encoding="utf-8") as f:
        f.write(text)
    client = "http://127.0.0.1:%d" % ports["etcd"]
    peer = "http://127.0.0.1:%d" % ports["etcd_peer"]
    with open(etcd_yaml, "w", encoding="utf-8") as f:
        f.write(
            "name: default\ndata-dir: %s\nlisten-client-urls: %s\nadvertise-client-urls: %s\n"
            "listen-peer-urls: %s\ninitial-advertise-peer-urls: %s\ninitial-cluster: default=%s\n"
            % (values["etcd_data_dir"], client, client, peer, peer, peer)
        )
    with open(os.path.join(configs, "glog.conf"), "w", encoding="utf-8") as out, open(os.path.join(template_dir, "glog.conf"), encoding="utf-8") as src:
        out.write(src.read())
    return configs


def die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def healthz(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=2) as r:
            return r.status == 200 and b"OK" in r.read()
    except Exception:
        return False


def set_password(port, password, fresh, child):
    """Fresh: root's password "Milvus" becomes vecbench's. Existing: checks that it still logs in."""
    from pymilvus import connections, utility

    deadline = time.monotonic() + 300
    last = None
    while time.monotonic() < deadline and child.poll() is None:
        try:
            if fresh:
                connections.connect("setup", host="127.0.0.1", port=port, user="root", password=DEFAULT_PASSWORD, timeout=10)
                utility.reset_password("root", DEFAULT_PASSWORD, password, using="setup")
            else:
                connections.connect("setup", host="127.0.0.1", port=port, user="root", password=password, timeout=10)
                utility.list_collections(using="setup")
            connections.disconnect("setup")
            return
        except Exception as e:  # not ready yet, or the server is still loading
            last = e
            connections.disconnect("setup")
            time.sleep(0.5)
    raise SystemExit("vecbench milvus launcher: could not %s root's password: %s" % ("set" if fresh else "log in with", str(last).splitlines()[0] if last else "the server exited"))


def main():
    data_dir, ports_json, password_file, bin_dir, mode = sys.argv[1:6]
    os.umask(0o077)
    ports = json.loads(ports_json)
    with open(password_file, encoding="utf-8") as f:
        password = f.read().strip()
    configs = write_config(data_dir, ports)
    env = dict(os.environ)
    env.update(
        DEPLOY_MODE="STANDALONE",
        METRICS_PORT=str(ports["metrics"]),
        MILVUS_RUN_DIR=os.path.join(data_dir, "run"),
        MILVUSCONF=configs + "/",
        LD_LIBRARY_PATH=":".join(x for x in (bin_dir, os.environ.get("LD_LIBRARY_PATH", "")) if x),
    )
    child = subprocess.Popen([os.path.join(bin_dir, "milvus"), "run", "standalone"], cwd=data_dir, env=env, preexec_fn=die_with_parent)

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    started = time.monotonic()
    while child.poll() is None and not healthz(ports["metrics"]):
        time.sleep(0.1)
    if child.poll() is None:
        log("healthz OK after %.1fs" % (time.monotonic() - started))
        try:
            set_password(ports["proxy"], password, mode == "fresh", child)
        except BaseException:
            child.kill()
            raise
        log("ready after %.1fs (root's password %s)" % (time.monotonic() - started, "set" if mode == "fresh" else "checked"))
    code = child.wait()
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
