"""Example resource of the pdf-forms skill (skillsd never executes skill scripts)."""

import json
import sys

if __name__ == "__main__":
    print(json.dumps({"args": sys.argv[1:]}))
