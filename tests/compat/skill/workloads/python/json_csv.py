# json and csv through files, as a data-munging skill does.
import csv, io, json, tempfile

rows = [{"item": "apples", "qty": 3, "price": 1.25}, {"item": "pears", "qty": 0, "price": 2.5}]
text = json.dumps({"rows": rows}, indent=2, sort_keys=True)
assert json.loads(text)["rows"][1]["item"] == "pears"
with tempfile.NamedTemporaryFile("w+", suffix=".csv", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["item", "qty", "price"])
    w.writeheader()
    w.writerows(rows)
    f.flush()
    f.seek(0)
    back = list(csv.DictReader(f))
assert back[0]["qty"] == "3"
buf = io.StringIO()
json.dump(back, buf)
assert "apples" in buf.getvalue()
