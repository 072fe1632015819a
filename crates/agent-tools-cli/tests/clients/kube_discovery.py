"""A stand-in for a Kubernetes API server's discovery documents, nothing else.

usage: python kube_discovery.py      (prints the port it listens on, on 127.0.0.1)

`kubectl create --dry-run=client` sends no object, but maps each kind to its resource through
the server's discovery (/api, /apis, /api/v1) first; there is no cluster here, so the deploy test
points `--server` at this. It knows the core kinds docs/deploy/kubernetes.yaml uses.
"""

import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
R = lambda name, kind, ns=True: {"name": name, "singularName": kind.lower(), "namespaced": ns, "kind": kind, "verbs": ["create", "get", "list"]}
DOCS = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        R("pods", "Pod"), R("services", "Service"), R("secrets", "Secret"),
        R("persistentvolumeclaims", "PersistentVolumeClaim"), R("namespaces", "Namespace", False)]},
}
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        doc = DOCS.get(self.path.split("?")[0])
        body = json.dumps(doc if doc is not None else {"kind": "Status", "code": 404}).encode()
        self.send_response(200 if doc is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
