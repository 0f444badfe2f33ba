#!/usr/bin/env python3
"""Turn input rows into a CSV file and a Markdown report, both artifacts."""
import csv
import json
import os
import sys


def main():
    data = json.loads(os.environ.get("SANDBOX_INPUT") or sys.stdin.read() or "{}")
    rows = data.get("rows", [])
    title = str(data.get("title", "Report"))
    files_dir = os.environ.get("SANDBOX_FILES_DIR", "/out/files/")
    os.makedirs(os.path.join(files_dir, "report"), exist_ok=True)

    columns = sorted({key for row in rows for key in row})
    with open(os.path.join(files_dir, "table.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)

    with open(os.path.join(files_dir, "report", "summary.md"), "w", encoding="utf-8") as f:
        f.write(f"# {title}\n\n{len(rows)} rows, columns: {', '.join(columns) or 'none'}\n")

    result = {"files": ["table.csv", "report/summary.md"], "rows": len(rows)}
    with open(os.environ.get("SANDBOX_OUTPUT", "/out/output.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
