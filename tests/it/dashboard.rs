//! The dashboard for real: a static site built from real histories (rune and flatcontainer,
//! imported), opened in headless Chromium (Debian's `chromium`, installed by `.ci/run`), and the
//! same pages served live by `benchgate serve`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::server::Server;
use crate::support::*;

const RUNE: &str = "rune-rs__rune/dev/bench/data.js";
const FLAT: &str = "antiguru__flatcontainer/dev/bench/data.js";

/// Debian's Chromium. Without it the browser check says on the terminal that it was skipped and
/// passes, unless `BENCHGATE_REQUIRE_BROWSER` is set, as `.ci/run` does (it installs it).
fn chromium(test: &str) -> Option<PathBuf> {
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(candidate).is_file() {
            return Some(candidate.into());
        }
    }
    assert!(
        std::env::var_os("BENCHGATE_REQUIRE_BROWSER").is_none(),
        "BENCHGATE_REQUIRE_BROWSER is set, but Debian's chromium is not installed: `apt-get install chromium`"
    );
    // Straight to the terminal: the test harness captures eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: no Chromium at /usr/bin/chromium; `apt-get install chromium` to run this browser check"
    );
    None
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, stderr).
fn run_chromium(browser: &Path, dir: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join("chromium-profile").display()
        ))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `benchgate import-history` of the history file `data` as `repo`, into `dir`'s store.
fn import(dir: &Path, data: &Path, repo: &str) {
    let output = benchgate(
        dir,
        &["import-history", data.to_str().unwrap(), "--repo", repo],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// The site of the corpus history `data` imported as `repo`, built under `dir`.
fn site_of(dir: &Path, data: &str, repo: &str) -> PathBuf {
    import(dir, &corpus(data), repo);
    let out = dir.join("site");
    let output = benchgate(dir, &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    out
}

fn site(dir: &Path) -> PathBuf {
    for (data, repo) in [(RUNE, "rune-rs/rune"), (FLAT, "antiguru/flatcontainer")] {
        import(dir, &corpus(data), repo);
    }
    let out = dir.join("site");
    let output = benchgate(dir, &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    out
}

/// The benchmark page of `benchmark` under `site`'s only machine of `repo`.
fn benchmark_page(site: &Path, repo: &str, benchmark: &str) -> PathBuf {
    let machine = std::fs::read_dir(site.join(repo))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(machine.join("index.html")).unwrap();
    let needle = format!(">{benchmark}</a>");
    let at = html
        .find(&needle)
        .unwrap_or_else(|| panic!("{benchmark} not on the index"));
    let href = html[..at]
        .rsplit("href=\"")
        .next()
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    machine.join(href)
}

/// How many commits of a history measured `benchmark`: the points its chart must show (a
/// commit measured twice is one point).
fn entries_with(data: &str, benchmark: &str) -> usize {
    let text = std::fs::read_to_string(corpus(data)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    value["entries"]["Benchmark"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["benches"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["name"] == benchmark)
        })
        .map(|e| e["commit"]["id"].as_str().unwrap())
        .collect::<std::collections::HashSet<_>>()
        .len()
}

#[test]
fn the_static_site_renders_in_chromium_with_every_point() {
    let _load = loading_the_machine();
    let Some(browser) = chromium("the_static_site_renders_in_chromium_with_every_point") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let site = site(dir.path());
    let page = benchmark_page(&site, "rune-rs/rune", "primes/rune");

    // The DOM after scripts ran: the chart is inline SVG with one circle per run.
    let (dom, log) = run_chromium(&browser, dir.path(), &page, &["--dump-dom"]);
    let expected = entries_with(RUNE, "primes/rune");
    assert!(expected > 50);
    assert_eq!(
        dom.matches("<circle").count(),
        expected,
        "one point per run"
    );
    // Each point has its tooltip and links its commit, in the DOM the browser built.
    let chart = dom
        .split("id=\"chart\"")
        .nth(1)
        .and_then(|rest| rest.split("</svg>").next())
        .expect("the chart in the DOM");
    assert_eq!(
        chart.matches("<title>#").count(),
        expected,
        "a tooltip per point"
    );
    assert_eq!(
        chart
            .matches("<a href=\"https://github.com/rune-rs/rune/commit/")
            .count(),
        expected,
        "a link per point"
    );
    assert!(dom.contains("<h2>Change points</h2>"));
    assert!(!log.contains("CONSOLE("), "console output: {log}");

    // The index: every benchmark, the filter box, no console errors.
    let index = page.parent().unwrap().parent().unwrap().join("index.html");
    let (dom, log) = run_chromium(&browser, dir.path(), &index, &["--dump-dom"]);
    assert_eq!(dom.matches("<tr data-name=").count(), 19);
    assert!(dom.contains("id=\"filter\""));
    assert!(!log.contains("CONSOLE("), "console output: {log}");

    // A screenshot that is not blank: a good share of the pixels are not white.
    let shot = dir.path().join("shot.png");
    run_chromium(
        &browser,
        dir.path(),
        &page,
        &[
            "--window-size=1200,900",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let (width, height, share) = drawn(&shot);
    assert_eq!((width, height), (1200, 900));
    assert!(
        share > 0.02,
        "only {:.2}% of the screenshot is drawn",
        share * 100.0
    );

    // The phone: the page fits a narrow window without a horizontal scroll of the body.
    let narrow = dir.path().join("narrow.png");
    run_chromium(
        &browser,
        dir.path(),
        &page,
        &[
            "--window-size=390,844",
            &format!("--screenshot={}", narrow.display()),
        ],
    );
    let (width, _, share) = drawn(&narrow);
    assert_eq!(width, 390);
    assert!(
        share > 0.02,
        "only {:.2}% of the phone screenshot is drawn",
        share * 100.0
    );
}

/// A PNG's width, height, and the share of its pixels that are not near-white.
fn drawn(path: &Path) -> (u32, u32, f64) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buffer[..info.buffer_size()];
    let inked = pixels
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|c| *c < 200))
        .count();
    (
        info.width,
        info.height,
        inked as f64 / (pixels.len() / channels) as f64,
    )
}

#[test]
fn serve_shows_the_same_pages_live() {
    let _load = loading_the_machine();
    let dir = tempfile::tempdir().unwrap();
    let site = site(dir.path());
    let db = dir.path().join(".benchgate/benchgate.db");
    let server = Server::start(&db, &[], None);
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let (status, live) = server.get_text("/");
    assert_eq!((status, live), (200, index));
    let page = benchmark_page(&site, "antiguru/flatcontainer", "empty_clone");
    let relative = page
        .strip_prefix(&site)
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let (status, live) = server.get_text(&format!("/{relative}"));
    assert_eq!(status, 200);
    assert_eq!(live, std::fs::read_to_string(&page).unwrap());
    assert_eq!(server.get_text("/nowhere.html").0, 404);
}

#[test]
fn time_budgets_on_medians_are_drawn_on_their_charts() {
    let _load = loading_the_machine();
    let dir = tempfile::tempdir().unwrap();
    import(dir.path(), &corpus(RUNE), "rune-rs/rune");
    std::fs::write(
        dir.path().join("benchgate.toml"),
        "[[budget]]\nbenchmark = \"primes/*\"\nbound = \"< 6 ms\"\n\n[[budget]]\nbenchmark = \"primes/rune\"\nstatistic = \"p95\"\nbound = \"< 9 ms\"\n",
    )
    .unwrap();
    let out = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let page =
        |name: &str| std::fs::read_to_string(benchmark_page(&out, "rune-rs/rune", name)).unwrap();
    let rune = page("primes/rune");
    assert_eq!(
        rune.matches("median &lt; 6 ms").count(),
        1,
        "the median budget, once; not the p95 one"
    );
    assert!(rune.contains("stroke=\"#D97706\""));
    assert!(page("primes/rhai").contains("median &lt; 6 ms"));
    assert!(!page("fib_20").contains("#D97706"), "no budget, no line");
}

#[test]
fn same_job_ab_rounds_are_one_point_per_commit() {
    let _load = loading_the_machine();
    // A B, B A, A B, as `benchgate ab` stores its rounds (kind local, one attempt per round):
    // the head does the same work 1.5 times slower.
    let dir = tempfile::tempdir().unwrap();
    let tree = "dicethedev__MerkleForge/target/criterion";
    let base = corpus(tree);
    let slower = scaled_copy(tree, 1.5);
    let (a, b) = ("a".repeat(40), "b".repeat(40));
    for round in 1..=3u32 {
        let mut sides = [(&a, base.as_path()), (&b, slower.path())];
        if round.is_multiple_of(2) {
            sides.reverse();
        }
        for (commit, path) in sides {
            let attempt = round.to_string();
            let output = benchgate(
                dir.path(),
                &[
                    "ingest",
                    path.to_str().unwrap(),
                    "--repo",
                    "acme/rocket",
                    "--commit",
                    commit,
                    "--attempt",
                    &attempt,
                ],
            );
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        }
    }
    let out = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let index = std::fs::read_dir(out.join("acme/rocket"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(index.join("index.html")).unwrap();
    let href = html
        .split("href=\"b/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    let page = std::fs::read_to_string(index.join("b").join(href)).unwrap();
    let runs = page.split("<h2>Runs</h2>").nth(1).unwrap();
    assert_eq!(
        runs.matches("<tr><td class=\"num\">").count(),
        2,
        "six rounds, two commits, two points: {runs}"
    );
    assert_eq!(runs.matches(&format!("/commit/{a}")).count(), 1, "{runs}");
    assert_eq!(runs.matches(&format!("/commit/{b}")).count(), 1, "{runs}");
}

#[test]
fn a_rebuild_draws_only_the_machines_whose_data_changed() {
    let _load = loading_the_machine();
    // Two repositories, each its own machine in the site; then a new run of one of them.
    let dir = tempfile::tempdir().unwrap();
    let out = site(dir.path());
    let built: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(".benchgate-built.json")).unwrap()).unwrap();
    assert_eq!(built.as_object().unwrap().len(), 2, "{built}");
    let rune = benchmark_page(&out, "rune-rs/rune", "primes/rune");
    let flat_index = std::fs::read_dir(out.join("antiguru/flatcontainer"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("index.html");
    // Marks that only a redraw removes.
    let mark = |path: &Path| {
        let mut text = std::fs::read_to_string(path).unwrap();
        text.push_str("<!-- left as it was -->");
        std::fs::write(path, text).unwrap();
    };
    let marked = |path: &Path| {
        std::fs::read_to_string(path)
            .unwrap()
            .ends_with("<!-- left as it was -->")
    };
    mark(&rune);
    mark(&flat_index);

    // Nothing new: nothing drawn.
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("(0 machines drawn, 2 unchanged)"),
        "{}",
        stderr(&output)
    );
    assert!(marked(&rune) && marked(&flat_index));

    // A new run of rune (a real code change's numbers: every benchmark 1.5× slower): rune's
    // pages are drawn again and show it; flatcontainer's are left as they were.
    let history = std::fs::read_to_string(corpus(RUNE)).unwrap();
    let value: serde_json::Value =
        serde_json::from_str(&history[history.find('{').unwrap()..]).unwrap();
    let mut last = value["entries"]["Benchmark"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    last["commit"]["id"] = serde_json::json!("c".repeat(40));
    last["date"] = serde_json::json!(last["date"].as_u64().unwrap() + 86_400_000);
    for bench in last["benches"].as_array_mut().unwrap() {
        bench["value"] = serde_json::json!(bench["value"].as_f64().unwrap() * 1.5);
    }
    let newer = dir.path().join("newer.js");
    std::fs::write(
        &newer,
        format!(
            "window.BENCHMARK_DATA = {}",
            serde_json::json!({"lastUpdate": 0, "repoUrl": "https://github.com/rune-rs/rune", "entries": {"Benchmark": [last]}})
        ),
    )
    .unwrap();
    import(dir.path(), &newer, "rune-rs/rune");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert!(
        stderr(&output).contains("(1 machine drawn, 1 unchanged)"),
        "{}",
        stderr(&output)
    );
    assert!(!marked(&rune), "rune's page was drawn again");
    assert!(
        std::fs::read_to_string(&rune)
            .unwrap()
            .contains(&"c".repeat(40)),
        "with the new run"
    );
    assert!(
        marked(&flat_index),
        "flatcontainer's pages were left as they were"
    );

    // --full draws everything; so does a machine whose pages were deleted.
    let output = benchgate(
        dir.path(),
        &["dashboard", "--out", out.to_str().unwrap(), "--full"],
    );
    assert!(
        stderr(&output).contains("(2 machines drawn, 0 unchanged)"),
        "{}",
        stderr(&output)
    );
    assert!(!marked(&flat_index));
    mark(&rune);
    std::fs::remove_file(&flat_index).unwrap();
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert!(
        stderr(&output).contains("(1 machine drawn, 1 unchanged)"),
        "{}",
        stderr(&output)
    );
    assert!(flat_index.is_file() && marked(&rune));
}

/// Every file of the site under `dir`, by its path inside it.
fn files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(dir).unwrap().to_owned(), bytes);
            }
        }
    }
    out
}

#[test]
fn the_trend_read_from_each_runs_packed_view_draws_the_site_its_measurements_draw() {
    let _load = loading_the_machine();
    // The dashboard reads each run's values from its one-row gate view where it has one; runs
    // stored before the view (or trimmed by prune) are read from their measurements. The two
    // must draw the same site to the byte: every chart, tooltip, table and change point.
    let dir = tempfile::tempdir().unwrap();
    // Real Criterion recordings too, whose best sample is not their median: three runs.
    for (i, run) in ["run-01", "run-02", "run-03"].iter().enumerate() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/recordings/idle")
            .join(format!("{run}.jsonl"));
        let output = benchgate(
            dir.path(),
            &[
                "ingest",
                "--cargo-criterion-json",
                file.to_str().unwrap(),
                "--repo",
                "acme/recorded",
                "--kind",
                "push",
                "--commit",
                &format!("{}", i + 1).repeat(40),
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let with_views = files(&site(dir.path()));
    crate::gate::sql(
        &dir.path().join(".benchgate/benchgate.db"),
        "UPDATE runs SET gate_view = NULL",
    );
    let out = dir.path().join("site-without-views");
    let output = benchgate(
        dir.path(),
        &["dashboard", "--full", "--out", out.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let without = files(&out);
    assert!(with_views.len() > 60, "{} files", with_views.len());
    assert_eq!(
        with_views.keys().collect::<Vec<_>>(),
        without.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &with_views {
        assert!(
            bytes == &without[path],
            "{} differs with and without the views",
            path.display()
        );
    }
}

/// A throughput history (`MiB/s`, bigger is better: awslabs/mountpoint-s3's, eight runs of
/// several suites) reads right on the site: a rise is better and green, a drop worse and red,
/// on every page, in class and in words.
#[test]
fn a_rate_is_coloured_by_its_direction_not_its_sign() {
    let _load = loading_the_machine();
    let dir = tempfile::tempdir().unwrap();
    let out = site_of(
        dir.path(),
        "awslabs__mountpoint-s3/dev/bench/data.js",
        "awslabs/mountpoint-s3",
    );
    let mut coloured = Vec::new();
    for (path, bytes) in files(&out) {
        if path.extension().is_none_or(|e| e != "html") {
            continue;
        }
        let html = String::from_utf8(bytes).unwrap();
        for piece in html.split("<span class=\"").skip(1) {
            let class = piece.split('"').next().unwrap();
            let judged = class.trim_start_matches("badge ");
            if judged != "worse" && judged != "better" {
                continue;
            }
            let title = piece
                .split("title=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let text = piece.split('>').nth(1).unwrap().split('<').next().unwrap();
            coloured.push((
                path.clone(),
                judged.to_owned(),
                title.to_owned(),
                text.to_owned(),
            ));
        }
    }
    // The newest runs of two benchmarks rose 15.0% and 17.9%, and one took a 4.2% step up.
    assert!(coloured.len() >= 3, "{coloured:#?}");
    for (path, judged, title, text) in &coloured {
        let (sign, words) = if judged == "better" {
            ('+', "higher (better)")
        } else {
            ('-', "lower (worse)")
        };
        assert!(
            text.contains(&format!(" {sign}")) || text.starts_with(sign),
            "{}: {judged} {text:?}",
            path.display()
        );
        assert!(title.ends_with(words), "{}: {title:?}", path.display());
    }
    assert!(
        coloured
            .iter()
            .any(|(_, judged, _, text)| judged == "better" && text == "newest run +17.9%"),
        "{coloured:#?}"
    );
}

/// Where a benchmark page's chart draws its value axis in Chromium: the rotated title's
/// `[left, right]` and each tick label's `[left, right, text]`, in page pixels.
fn value_axis(browser: &Path, dir: &Path, page: &Path) -> serde_json::Value {
    in_frame(
        browser,
        dir,
        page,
        1280,
        "const box = t => { const r = t.getBoundingClientRect(); return [r.left, r.right, t.textContent.trim()]; };
         const texts = [...d.querySelectorAll('svg text')];
         return { title: box(texts.find(t => (t.getAttribute('transform') || '').startsWith('rotate'))),
           ticks: texts.filter(t => t.getAttribute('text-anchor') === 'end').map(box) };",
    )
}

/// safetensors' pytest rates (`457.6 iter/sec`, imported bare): the runs table shows no
/// interval it does not have; on a log axis (one benchmark rose 117-fold) and a linear one, the
/// tick labels sit at round values and clear of the axis's title.
#[test]
fn a_charts_value_axis_reads_round_values_clear_of_its_title() {
    let _load = loading_the_machine();
    let dir = tempfile::tempdir().unwrap();
    let repo = "huggingface/safetensors";
    let site = site_of(
        dir.path(),
        "huggingface__safetensors/dev/bench/data.js",
        repo,
    );
    // Its runs table: each value bare, no interval (—), and no fastest iteration (a rate's
    // lowest sample is its worst, and the gate does not judge it).
    let flax = benchmark_page(&site, repo, "benches/test_flax.py::test_flax_flax_load");
    let html = std::fs::read_to_string(flax).unwrap();
    let runs = &html[html.find("<h2>Runs</h2>").unwrap()..];
    assert!(
        runs.contains("<th>recorded</th><th>value</th><th>interval</th></tr>"),
        "{runs}"
    );
    assert!(
        runs.contains(
            ">2026-05-15</td><td class=\"num\">5.014 iter/sec</td><td class=\"num\">—</td></tr>"
        ),
        "{runs}"
    );
    let Some(browser) = chromium("a_charts_value_axis_reads_round_values_clear_of_its_title")
    else {
        return;
    };
    for (benchmark, log) in [
        ("benches/test_paddle.py::test_paddle_sf_load", true),
        ("benches/test_pt.py::test_pt_sf_load_cpu_pread", false),
    ] {
        let page = benchmark_page(&site, repo, benchmark);
        let html = std::fs::read_to_string(&page).unwrap();
        assert_eq!(html.contains(", log scale"), log, "{benchmark}");
        let axis = value_axis(&browser, dir.path(), &page);
        let title_right = axis["title"][1].as_f64().unwrap();
        let ticks = axis["ticks"].as_array().unwrap();
        assert!(ticks.len() >= 4, "{benchmark}: {axis}");
        let mut values = Vec::new();
        for tick in ticks {
            let (left, text) = (tick[0].as_f64().unwrap(), tick[2].as_str().unwrap());
            assert!(
                left > title_right,
                "{benchmark}: {text} over the title: {axis}"
            );
            values.push(
                text.strip_suffix(" iter/sec")
                    .unwrap()
                    .parse::<f64>()
                    .unwrap(),
            );
        }
        let mantissa = |v: f64| v / 10f64.powf(v.log10().floor());
        let among = |v: f64, round: &[f64]| round.iter().any(|r| (mantissa(v) - r).abs() < 1e-9);
        if log {
            // 1, 2, 5 × 10ⁿ, or finer: 1, 1.5, 2, 3, 5, 7 × 10ⁿ.
            for v in &values {
                assert!(among(*v, &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]), "{v}: {axis}");
            }
        } else {
            // Equal steps of 1, 2, 2.5 or 5 × 10ⁿ, each tick a multiple of the step.
            let step = values[1] - values[0];
            assert!(among(step, &[1.0, 2.0, 2.5, 5.0]), "{step}: {axis}");
            for pair in values.windows(2) {
                assert!(((pair[1] - pair[0]) / step - 1.0).abs() < 1e-6, "{axis}");
            }
            for v in &values {
                assert!(
                    ((v / step) - (v / step).round()).abs() < 1e-6,
                    "{v}: {axis}"
                );
            }
        }
    }
}

/// Opens `page` in an iframe `width` pixels wide (so the page's own media queries apply) and
/// returns what `script` returns: a function body given the frame's window `w` and document `d`.
fn in_frame(
    browser: &Path,
    dir: &Path,
    page: &Path,
    width: u32,
    script: &str,
) -> serde_json::Value {
    let probe = page.with_file_name("probe.html");
    std::fs::write(
        &probe,
        format!(
            r#"<!doctype html><html><body style="margin:0"><iframe id="f" src="{}" style="width:{width}px;height:900px;border:0"></iframe><script>
document.getElementById('f').addEventListener('load', () => {{
  const w = document.getElementById('f').contentWindow, d = w.document;
  document.body.setAttribute('data-probe', JSON.stringify((() => {{ {script} }})()));
}});
</script></body></html>"#,
            page.file_name().unwrap().to_str().unwrap()
        ),
    )
    .unwrap();
    let (dom, _) = run_chromium(
        browser,
        dir,
        &probe,
        &["--allow-file-access-from-files", "--dump-dom"],
    );
    let raw = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("nothing probed in {dom}"));
    serde_json::from_str(&raw.replace("&quot;", "\"")).unwrap()
}

/// How a machine's index lays out in a window `width` pixels wide: the first row's name,
/// newest value and change cells as `[left, right]`, the viewport's width with and without its
/// scroll bar, and the widths the page and the benchmarks' table scroller would need.
fn layout(browser: &Path, dir: &Path, index: &Path, width: u32) -> serde_json::Value {
    in_frame(
        browser,
        dir,
        index,
        width,
        "const cells = [...d.querySelector('tr[data-name]').querySelectorAll('td')].slice(0, 3)
           .map(td => { const r = td.getBoundingClientRect(); return [r.left, r.right]; });
         const scroller = d.getElementById('benchmarks').parentElement;
         return { width: w.innerWidth, client: d.documentElement.clientWidth, cells,
           page: d.documentElement.scrollWidth,
           table: scroller.scrollWidth, shown: scroller.clientWidth };",
    )
}

/// hyper's two suites on one machine (15 benchmarks, names like
/// `end_to_end/http1_consecutive_x1_both_100kb`) and safetensors' pytest rates (`120.8 iter/sec`, names
/// like `benches/test_pt.py::test_pt_sf_load_cpu_small_pread`, three benchmarks "not run since"
/// a date): on a phone the first row's name, newest value and change are in view without
/// scrolling sideways; on a laptop no column is cut off.
#[test]
fn a_machines_index_fits_a_phone_and_a_laptop() {
    let _load = loading_the_machine();
    let Some(browser) = chromium("a_machines_index_fits_a_phone_and_a_laptop") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let histories = [
        (
            "hyperium__hyper/dev/bench/data.js",
            "hyperium/hyper",
            "http1_consecutive_x1_both_100kb",
        ),
        (
            "huggingface__safetensors/dev/bench/data.js",
            "huggingface/safetensors",
            "not run since",
        ),
    ];
    for (data, repo, _) in histories {
        import(dir.path(), &corpus(data), repo);
    }
    let site = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", site.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for (_, repo, shows) in histories {
        let index = std::fs::read_dir(site.join(repo))
            .unwrap()
            .map(|e| e.unwrap().path().join("index.html"))
            .find(|i| std::fs::read_to_string(i).unwrap().contains(shows))
            .unwrap_or_else(|| panic!("no index of {repo} shows {shows}"));

        let phone = layout(&browser, dir.path(), &index, 390);
        assert_eq!(phone["width"], 390, "{repo}: {phone}");
        let client = phone["client"].as_f64().unwrap();
        for cell in phone["cells"].as_array().unwrap() {
            let right = cell[1].as_f64().unwrap();
            assert!(right <= client, "{repo}: a cell ends at {right}: {phone}");
        }
        assert!(phone["page"].as_f64().unwrap() <= client, "{repo}: {phone}");
        assert!(
            phone["table"].as_f64().unwrap() <= phone["shown"].as_f64().unwrap(),
            "{repo}: {phone}"
        );

        let laptop = layout(&browser, dir.path(), &index, 1280);
        assert!(
            laptop["table"].as_f64().unwrap() <= laptop["shown"].as_f64().unwrap(),
            "{repo}: a column is cut off: {laptop}"
        );

        // The first benchmark's page: its name (the heading) wraps; only its tables scroll.
        let html = std::fs::read_to_string(&index).unwrap();
        let href = html
            .split("<td><a href=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let page = index.with_file_name(href);
        let widths = in_frame(
            &browser,
            dir.path(),
            &page,
            390,
            "return { client: d.documentElement.clientWidth,
               page: d.documentElement.scrollWidth };",
        );
        let client = widths["client"].as_f64().unwrap();
        assert!(
            widths["page"].as_f64().unwrap() <= client,
            "{repo}: {widths}"
        );
    }
}

/// hex's `encode/*` benchmarks over 14 commits (tests/fixtures/hex-trend/SOURCES.md): real
/// Criterion throughput benchmarks whose input is the crate's own `src/lib.rs`, which grew by
/// 12.2% and 8.6% at the last two commits of its history, the second of them a faster
/// `hex::encode`. The site shows each run's rate, its own bytes over its own time, as Criterion
/// and the pull request comment do: the four encoders whose code never changed have no step
/// (as times per iteration they read 21–30% slower), and `encode/hex`'s improvement is a step
/// for the better.
#[test]
fn a_throughput_benchmark_is_charted_as_its_rate_so_a_grown_input_is_no_step() {
    let _load = loading_the_machine();
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hex-trend");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 14);
    let mut commits = Vec::new();
    for run in &runs {
        let name = run.file_stem().unwrap().to_str().unwrap();
        let commit = name.split_once('-').unwrap().1.to_owned();
        let output = benchgate(
            dir.path(),
            &[
                "ingest",
                "--cargo-criterion-json",
                run.to_str().unwrap(),
                "--repo",
                "KokaKiwi/rust-hex",
                "--kind",
                "push",
                "--branch",
                "master",
                "--commit",
                &commit,
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        commits.push(commit);
    }
    // A rate budget on a median is drawn on the rate's chart, in its unit.
    std::fs::write(
        dir.path().join("benchgate.toml"),
        "[[budget]]\nbenchmark = \"encode/hex\"\nbound = \">= 0.5 GiB/s\"\n",
    )
    .unwrap();
    let out = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let text = |html: &str| {
        let mut plain = String::new();
        let mut inside = false;
        for c in html.chars() {
            match c {
                '<' => inside = true,
                '>' => {
                    inside = false;
                    plain.push(' ');
                }
                c if !inside => plain.push(c),
                _ => {}
            }
        }
        plain.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // Each unchanged encoder: no change point, and its runs are rates.
    for benchmark in [
        "encode/data_encoding",
        "encode/rustc_hex",
        "encode/faster_hex",
        "encode/faster_hex/fallback",
    ] {
        let page =
            std::fs::read_to_string(benchmark_page(&out, "KokaKiwi/rust-hex", benchmark)).unwrap();
        let page = text(&page);
        assert!(
            page.contains("Change points None: the trend is flat within its noise."),
            "{benchmark}: {page}"
        );
        assert!(
            page.contains("Blue: each run's throughput (GiB/s; higher is better)")
                || page.contains("Blue: each run's throughput (MiB/s; higher is better)"),
            "{benchmark}: {page}"
        );
        // What the gate compares, the fastest iteration, as its rate: above the median's.
        assert!(
            page.contains("Grey: the rate of each run's fastest iteration"),
            "{benchmark}: {page}"
        );
        assert!(
            !page.contains("0.5 GiB/s"),
            "{benchmark}: no budget, no line"
        );
    }
    // Each point's tooltip: the run's median rate and its fastest iteration's, higher.
    let page = std::fs::read_to_string(benchmark_page(
        &out,
        "KokaKiwi/rust-hex",
        "encode/faster_hex/fallback",
    ))
    .unwrap();
    let tooltips: Vec<&str> = page
        .split("<title>#")
        .skip(1)
        .map(|t| t.split("</title>").next().unwrap())
        .collect();
    assert_eq!(tooltips.len(), 14, "{tooltips:?}");
    let rate = |text: &str| -> f64 {
        let (number, unit) = text.trim().split_once(' ').unwrap();
        let number: f64 = number.replace(',', "").parse().unwrap();
        number * if unit.starts_with("GiB") { 1024.0 } else { 1.0 }
    };
    for tooltip in &tooltips {
        let (median, fastest) = tooltip.split_once(" · fastest ").expect(tooltip);
        let median = median
            .rsplit(" · ")
            .next()
            .unwrap()
            .split(" (")
            .next()
            .unwrap();
        assert!(rate(fastest) >= rate(median), "{tooltip}");
    }
    // `encode/hex`: 216 MiB/s for 11 runs, then about 1,000 MiB/s from 5cb1fe8 on.
    let page =
        std::fs::read_to_string(benchmark_page(&out, "KokaKiwi/rust-hex", "encode/hex")).unwrap();
    let steps: Vec<&str> = page
        .split("<tr><td class=\"num\">#")
        .skip(1)
        .filter(|row| row.contains('→'))
        .collect();
    assert_eq!(steps.len(), 1, "{}", text(&page));
    assert!(
        page.contains(">\nthroughput (MiB/s), log scale\n<"),
        "{page}"
    );
    assert_eq!(page.matches("median &gt;= 0.5 GiB/s").count(), 1, "{page}");
    // Drawn at 512 MiB/s: between the axis's 500 and 700 MiB/s ticks (y grows downwards).
    let tick_y = |label: &str| -> f64 {
        let at = page
            .find(&format!(">\n{label}\n<"))
            .unwrap_or_else(|| panic!("no tick {label}"));
        let tag = &page[page[..at].rfind("<text").unwrap()..at];
        tag.split(" y=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let budget_y: f64 = page
        .split("stroke=\"#D97706\"")
        .nth(1)
        .unwrap()
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split([',', ' '])
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        tick_y("700 MiB/s") < budget_y && budget_y < tick_y("500 MiB/s"),
        "budget at y {budget_y}"
    );
    let step = text(steps[0]);
    assert!(
        step.starts_with(&format!(
            "10 → #11 {} {} 216.",
            &commits[10][..12],
            &commits[11][..12]
        )),
        "{step}"
    );
    assert!(step.contains(" MiB/s "), "{step}");
    assert!(
        steps[0].contains("class=\"better\"") && steps[0].contains("higher (better)"),
        "{}",
        steps[0]
    );
    // Its newest run, as the index shows it: a rate, never a time.
    let machine = std::fs::read_dir(out.join("KokaKiwi/rust-hex"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let index = text(&std::fs::read_to_string(machine.join("index.html")).unwrap());
    assert!(index.contains("996.9 MiB/s"), "{index}");
    assert!(!index.contains(" µs") && !index.contains(" ns "), "{index}");
}
