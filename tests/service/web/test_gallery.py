"""The gallery page over HTTP: columns, rows, badges, filters, blinding and the animated PNG."""

from __future__ import annotations

import io
import re
from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from service.cli import app
from service.storage import ExperimentCaseRow, ExperimentRow
from tests.helpers.gallery import ANIMATED, MODELS, frame_shas, seed_gallery
from tests.helpers.review_runs import SECRET_MODEL, SECRET_PROVIDER, TASK_REF
from tests.helpers.web import Site, web_login

TILE = re.compile(r'<div class="tile" data-outcome="(\w+)" data-failing="([^"]*)">')


def _frames_in(png: bytes) -> int:
    return int(getattr(Image.open(io.BytesIO(png)), "n_frames", 1))


def _page(site: Site, who: str, **params: str) -> str:
    http = site.client()
    web_login(http, site.tokens[who])
    got = http.get("/gallery", params={"task": TASK_REF, **params})
    assert got.status_code == 200, got.text
    assert got.headers["content-security-policy"].startswith("default-src 'none'")
    return got.text


def test_admin_gallery_has_a_column_per_model_and_a_tile_per_run(site: Site) -> None:
    seed_gallery(site)
    html = _page(site, "admin")
    for model in (*MODELS, SECRET_MODEL):
        assert f'<th scope="col" class="model">{model}</th>' in html
    tiles = TILE.findall(html)
    assert sorted(o for o, _ in tiles) == sorted(["pass"] * 3 + ["fail"] * 2 + ["pending"] * 2)
    assert ("fail", "R1 R2") in tiles and ("fail", "B1") in tiles
    assert 'href="/runs/a2"' in html and "repeat 2" in html and "repeat 3" not in html
    # the animated run is one animated PNG of its three frames, in time order
    assert "/ui/motion?frames=" + ".".join(frame_shas(site, ANIMATED)) in html


def test_filters_keep_the_grid_and_drop_other_tiles(site: Site) -> None:
    seed_gallery(site)
    failed = TILE.findall(_page(site, "admin", outcome="fail"))
    assert failed == [("fail", "B1"), ("fail", "R1 R2")]  # row by row
    by_criterion = TILE.findall(_page(site, "admin", criterion="B1"))
    assert by_criterion == [("fail", "B1")]
    assert "No drawings match" in _page(site, "admin", outcome="incomplete")


def test_a_reviewers_gallery_shows_no_model_and_no_run(site: Site) -> None:
    seed_gallery(site)
    html = _page(site, "reviewer")
    for secret in (*MODELS, SECRET_MODEL, SECRET_PROVIDER, "alpha", "beta", "gamma"):
        assert secret not in html
    assert "/runs/" not in html and 'class="mono small muted"' not in html
    assert [f"model {i}" for i in range(1, 5)] == re.findall(r'class="model">(model \d)<', html)
    assert len(TILE.findall(html)) == 7  # every run of the visible task, blinded


def test_a_submitter_sees_only_own_runs(site: Site) -> None:
    seed_gallery(site)
    assert len(TILE.findall(_page(site, "alice"))) == 6  # runpassed is nobody's
    assert TILE.findall(_page(site, "bob")) == []


def test_motion_is_an_animated_png_at_the_frames_timestamps(site: Site) -> None:
    seed_gallery(site)
    http = site.client()
    web_login(http, site.tokens["reviewer"])
    shas = frame_shas(site, ANIMATED)
    got = http.get("/ui/motion", params={"frames": ".".join(shas)})
    assert got.status_code == 200 and got.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(got.content))
    assert getattr(image, "n_frames", 1) == 3
    durations = []
    for i in range(3):
        image.seek(i)
        durations.append(image.info["duration"])
    assert durations == [500, 750, 625]  # to the next timestamp; the last for the median gap
    # the first frame is red, the second green (frames in time order)
    image.seek(0)
    assert image.convert("RGB").getpixel((200, 140)) == (0xDD, 0x33, 0x33)
    image.seek(1)
    assert image.convert("RGB").getpixel((200, 140)) == (0x33, 0xAA, 0x33)
    # a frame the caller may not read makes the whole animation "not found"
    bob = site.client()
    web_login(bob, site.tokens["bob"])
    assert bob.get("/ui/motion", params={"frames": ".".join(shas)}).status_code == 404
    assert http.get("/ui/motion", params={"frames": "nope"}).status_code == 422


def test_report_gallery_writes_the_grid_and_its_images(site: Site, tmp_path: Path) -> None:
    seed_gallery(site)
    out = tmp_path / "out"
    env = {"REGUA_DATA_DIR": str(site.ctx.settings.data_dir)}
    args = ["report", "--gallery", "--task", TASK_REF, "--out", str(out)]
    got = CliRunner().invoke(app, args, env=env)
    assert got.exit_code == 0, got.output
    html = (out / "gallery.html").read_text()
    assert len(TILE.findall(html)) == 7 and "alpha-model" in html
    images = re.findall(r'<img src="(gallery/[0-9a-f]{64}\.png)"', html)
    assert len(images) == 7 and all((out / i).is_file() for i in images)
    animated = [i for i in images if _frames_in((out / i).read_bytes()) == 3]
    assert len(animated) == 1
    assert "http" not in html.replace("http-equiv", "")  # nothing from the network
    blind = CliRunner().invoke(app, [*args, "--blind", "--out", str(tmp_path / "b")], env=env)
    assert blind.exit_code == 0, blind.output
    blinded = (tmp_path / "b" / "gallery.html").read_text()
    assert not any(m in blinded for m in (*MODELS, SECRET_MODEL)) and "model 4" in blinded
    wrong = CliRunner().invoke(app, ["report", "--gallery", "--out", str(out)], env=env)
    assert wrong.exit_code == 2


def test_runs_of_an_experiment_line_up_by_item_and_repeat(site: Site) -> None:
    seed_gallery(site)
    with site.ctx.db.write() as s:
        exp = {"spec": {}, "spec_hash": "0", "plan": {}, "seed": 1}
        s.add(ExperimentRow(id="exp@w1", name="exp", window="w1", **exp))
        s.flush()
        for run_id, arm in (("a1", "alpha"), ("b1", "beta")):
            s.add(
                ExperimentCaseRow(
                    experiment_id="exp@w1",
                    case_key=f"exp@w1:{arm}:heron-item:0",
                    arm=arm,
                    item="heron-item",
                    repeat=0,
                    task_ref=TASK_REF,
                    run_id=run_id,
                )
            )
    html = _page(site, "admin")
    labels = re.findall(r'<th scope="row" class="repeat">([^<]*)</th>', html)
    assert labels == ["heron-item · repeat 1", "repeat 1", "repeat 2"]
    first_row = html.split('class="repeat">')[1].split("</tr>")[0]
    assert 'href="/runs/a1"' in first_row and 'href="/runs/b1"' in first_row
    assert first_row.count('<td class="empty">') == 2  # gamma and the seeded model
