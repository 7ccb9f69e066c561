"""Signs one webhook with the official Standard Webhooks library from PyPI
(`standardwebhooks`, installed into tests/e2e/.python by `cargo xtask
setup`) and POSTs it with the standard library's HTTP client.

    python3 send_webhook.py URL SECRET MSG_ID BODY [SECONDS_AGO]

Prints one line of JSON: {"status": N, "body": <the answer's JSON or null>}.
Used by tests/e2e/hooks.test.mjs: a real client nobody here wrote.
"""

import json
import sys
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone

from standardwebhooks.webhooks import Webhook


def main() -> None:
    url, secret, msg_id, body = sys.argv[1:5]
    seconds_ago = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    when = datetime.now(tz=timezone.utc) - timedelta(seconds=seconds_ago)
    signature = Webhook(secret).sign(msg_id=msg_id, timestamp=when, data=body)
    request = urllib.request.Request(
        url,
        data=body.encode(),
        method="POST",
        headers={
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(when.timestamp())),
            "webhook-signature": signature,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    print(json.dumps({"status": status, "body": answer}))


if __name__ == "__main__":
    main()
