import io
import json

from focuscrawl.evaluation.report import main, summarise


def test_summary_counts_harvest_and_skips_torn_lines(tmp_path, capsys):
    rows = [
        {"url": "http://a.test/1", "score": 0.5, "hot": True, "title": "One", "order": 1},
        {"url": "http://b.test/2", "score": 0.1, "hot": False, "title": "Two", "order": 2},
        {"url": "http://a.test/3", "score": 0.3, "hot": False, "title": "Three", "order": 3},
    ]
    text = "\n".join(json.dumps(r) for r in rows) + '\n{"url": "http://a.test/4", "sco'
    s = summarise(io.StringIO(text), relevant=0.2, top=2)
    assert (s.pages, s.relevant, s.hot, s.bad_lines) == (3, 2, 1, 1)
    assert s.harvest_rate == 2 / 3
    assert s.hosts == {"a.test", "b.test"}
    assert [r["order"] for r in s.top] == [1, 3]
    path = tmp_path / "pages.jsonl"
    path.write_text(text)
    assert main([str(path), "--relevant", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "3 pages from 2 hosts; harvest rate 66.7%" in out
    assert main([str(tmp_path / "missing.jsonl")]) == 1
