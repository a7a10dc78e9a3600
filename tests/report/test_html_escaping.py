"""report.html without a browser: every input string is escaped, and names that look like markup or math notation
neither break the page nor the plots."""
from html.parser import HTMLParser

from droidlag.report.html import render

NASTY = '<script>alert(1)</script>$x_$ & "quote" \'apos\' <img src=x onerror=alert(2)>'


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_input_strings_are_text_in_every_section():
    frames = [{"start_ns": i * 16_666_667, "dur_ns": d, "verdict": v, "naive_verdict": v, "process": NASTY,
               "stages": {"ui_thread": d // 2}, "causes": [{"name": NASTY, "share": 0.5, "normal_share": 0.1,
                                                          "evidence": {"thread": NASTY}}] if v == "SR" else []}
              for i, (d, v) in enumerate([(5_000_000, "ok")] * 5 + [(40_000_000, "SR")])]
    findings = {
        "version": 1, "generated_by": NASTY, "headlines": [{"text": NASTY, "level": "bad"}],
        "traces": [{"path": NASTY, "info": {"format": NASTY, "start_ns": 0},
                    "frames": {"summary": {"frames": 6, "sr": 1, "ff": 0, "apps": [{"process": NASTY}],
                                           "causes": [{"name": NASTY, "frames": 1, "mean_share": 0.5,
                                                       "mean_normal_share": 0.1}]},
                               "notes": [NASTY], "frames": frames}}],
        "hangs": {"events": [{"kind": "anr", "process": NASTY, "sentence": NASTY, "source": NASTY,
                              "blocked_thread": {"name": NASTY, "tid": 1},
                              "critical_threads": [{"name": NASTY, "tid": 2}],
                              "evidence": {"blocked_frames": [NASTY], "critical_frames": {NASTY: [NASTY]},
                                           "cause": {"top_frames": [NASTY]}, "abi": NASTY},
                              "wait_for_graph": {"nodes": [{"id": "a", "label": NASTY, "sublabel": NASTY,
                                                            "blocked": True}],
                                                 "edges": [{"src": "a", "dst": "a", "kind": NASTY, "label": NASTY}]}},
                             {"kind": "anr", "process": "p", "evidence": [NASTY]}],
                  "clusters": [{"id": 0, "size": 1, "cause": NASTY, "representative": NASTY, "members": [NASTY]}]},
        "inputs": [{"path": NASTY, "kind": NASTY, "status": NASTY, "reason": NASTY}], "warnings": [NASTY],
    }
    page = render(findings)
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    shown = "".join(parser.text)
    assert shown.count("<script>alert(1)</script>") >= 10
    assert "svg" in parser.tags and page.count('<div class="plot"><svg') == 2   # plots drawn despite "$x_$"
