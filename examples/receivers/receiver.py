"""A webhook receiver to probe: Standard Webhooks checks in front of a handler.

    python3 examples/receivers/receiver.py --handler article --db sqlite:/tmp/r.sqlite3 \
        --secret whsec_... --port 0

POST /hooks/{source}: checks the signature (webhook-id, webhook-timestamp,
webhook-signature; 5 minutes' tolerance), reads {"account_id": N, "amount": N},
and runs the handler named by --handler (see handlers.py): 200 applied or
duplicate, 400/401 refused before the handler, 422 a conflicting payload,
500 anything else. GET /balance answers {"balance": N} for account 1.

With --port 0 it picks a free port; either way its first line on stdout is
"listening on http://127.0.0.1:PORT" once it accepts connections.
"""

import argparse
import base64
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import handlers

TOLERANCE_SECS = 5 * 60
MAX_BODY = 64 * 1024


class Refused(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def check_signature(key, msg_id, timestamp, signature, body):
    """Standard Webhooks: v1,base64(HMAC-SHA256(key, "id.timestamp.body"))."""
    if not msg_id:
        raise Refused(400, "missing webhook-id")
    if not timestamp or not timestamp.isdigit():
        raise Refused(400, "missing or malformed webhook-timestamp")
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECS:
        raise Refused(401, "timestamp outside the tolerance")
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    for entry in (signature or "").split():
        version, _, tag = entry.partition(",")
        if version == "v1" and hmac.compare_digest(tag.encode(), expected):
            return
    raise Refused(401, "no valid v1 signature")


def read_event(body):
    try:
        event = json.loads(body)
    except ValueError as e:
        raise Refused(400, f"body is not JSON: {e}")
    if not isinstance(event, dict) or set(event) != {"account_id", "amount"}:
        raise Refused(400, "body must be {\"account_id\": N, \"amount\": N}")
    return event["account_id"], event["amount"]


def make_server(port, key, db, handler):
    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass  # quiet: the probe keeps the history

        def answer(self, status, payload):
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except ConnectionError:
                pass  # the sender left: its answer is lost, and it will retry

        def do_GET(self):
            if self.path != "/balance":
                return self.answer(404, {"error": "not found"})
            self.answer(200, {"balance": handlers.balance(db)})

        def do_POST(self):
            try:
                status, payload = 200, {"outcome": self.deliver()}
            except Refused as e:
                status, payload = e.status, {"error": str(e)}
            except ValueError as e:  # the article's handler: a conflicting payload
                status, payload = 422, {"error": str(e)}
            except Exception as e:
                status, payload = 500, {"error": repr(e)}
            self.answer(status, payload)

        def deliver(self):
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY:
                raise Refused(413, "body too large")
            body = self.rfile.read(length)
            source = self.path.rstrip("/").rsplit("/", 1)[-1] or "default"
            msg_id = self.headers.get("webhook-id")
            if not msg_id:  # header syntax first: no id, no dedup
                raise Refused(400, "missing webhook-id")

            def authentic():
                check_signature(key, msg_id, self.headers.get("webhook-timestamp"),
                                self.headers.get("webhook-signature"), body)

            if not getattr(handler, "checks_signature_late", False):
                authentic()
            account_id, amount = read_event(body)
            return handler(db, source, msg_id, account_id, amount,
                           body=body, authentic=authentic)

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # the listen backlog: a burst of 20 fits (the default is 5)

    return Server(("127.0.0.1", port), Receiver)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--handler", required=True, choices=sorted(handlers.HANDLERS))
    parser.add_argument("--db", required=True, help="sqlite:PATH or postgres://...")
    parser.add_argument("--secret", required=True, help="whsec_<base64>")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.secret.startswith("whsec_"):
        parser.error("--secret must start with whsec_")
    key = base64.b64decode(args.secret[len("whsec_"):])
    handlers.create_schema(args.db)
    server = make_server(args.port, key, args.db, handlers.HANDLERS[args.handler])
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
