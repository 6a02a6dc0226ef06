//! `benchgate serve` for real: the binary on a loopback port with a fresh SQLite file, spoken
//! to over raw HTTP/1.1 (so a request can also be cut off half-way) and by `benchgate upload`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use crate::support::fake_github::{self, FakeGitHub};
use crate::support::postgres;
use crate::support::server::{SECRET, Server};
use crate::support::*;
use serde_json::{Value, json};

const TREE: &str = "laysakura__louds-rs/criterion";
const REPO: &str = "laysakura/louds-rs";

/// A new upload token; `db` is a SQLite file or a `postgres://` URL.
fn token(dir: &Path, db: impl AsRef<std::ffi::OsStr>, repo: &str) -> String {
    let db = db.as_ref().to_str().unwrap();
    let output = benchgate(dir, &["token", "create", "--repo", repo, "--db", db]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output).trim().to_owned()
}

/// A run document of the corpus tree at commit `i`, as `benchgate upload` sends it.
fn document(dir: &Path, i: usize) -> Value {
    let db = dir.join(format!("source-{i}.db"));
    let commit = format!("{i:040x}");
    let output = benchgate(
        dir,
        &[
            "ingest",
            corpus(TREE).to_str().unwrap(),
            "--repo",
            REPO,
            "--commit",
            &commit,
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // The service's own rendering of a run is the document; read it back through a server.
    let mut server = Server::start(&db, &[], None);
    let (status, mut value) = server.get(&format!("/api/v1/repos/{REPO}/runs/1"));
    server.kill();
    assert_eq!(status, 200, "{value}");
    value.as_object_mut().unwrap().remove("id");
    value
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("service.db");
    (dir, db)
}

#[test]
fn uploads_are_authorized_per_repository_and_idempotent() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let other = token(dir.path(), &db, "someone/else");
    let run = document(dir.path(), 1);
    let server = Server::start(&db, &[], None);

    let (status, body) = server.request("POST", "/api/v1/runs", &[], run.to_string().as_bytes());
    assert_eq!(
        (status, &body["error"]["header"]),
        (401, &json!("authorization")),
        "{body}"
    );
    let (status, body) = server.upload("bgt_not_a_token", &run);
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["message"], "unknown or revoked token");
    let (status, body) = server.upload(&other, &run);
    assert_eq!(
        (status, &body["error"]["field"]),
        (403, &json!("repository")),
        "{body}"
    );
    assert_eq!(
        body["error"]["message"],
        format!("the token is for someone/else, not {REPO}")
    );

    let (status, body) = server.upload(&good, &run);
    assert_eq!(
        (status, &body["status"]),
        (201, &json!("created")),
        "{body}"
    );
    let id = body["id"].as_i64().unwrap();
    let (status, body) = server.upload(&good, &run);
    assert_eq!(
        (status, &body["id"], &body["status"]),
        (200, &json!(id), &json!("unchanged"))
    );
    // The same key with other results is a conflict, not a silent replace.
    let mut changed = run.clone();
    changed["measurements"][0]["median"]["point"] = json!(1.0);
    let (status, body) = server.upload(&good, &changed);
    assert_eq!(
        (status, &body["error"]["field"], &body["error"]["existing"]),
        (409, &json!("attempt"), &json!(id))
    );
    // `?attempt=next` (a nightly of a commit measured the night before): the next attempt,
    // and the same again is that run, unchanged; the query takes nothing else.
    let bearer = format!("Bearer {good}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    let next = |document: &Value| {
        server.request(
            "POST",
            "/api/v1/runs?attempt=next",
            &headers,
            document.to_string().as_bytes(),
        )
    };
    let (status, body) = next(&changed);
    assert_eq!(
        (status, &body["status"]),
        (201, &json!("created")),
        "{body}"
    );
    let second = body["id"].as_i64().unwrap();
    assert_ne!(second, id);
    assert_eq!(
        next(&changed).1,
        json!({"id": second, "status": "unchanged"})
    );
    assert_eq!(next(&run).1, json!({"id": id, "status": "unchanged"}));
    let (status, body) = server.request(
        "POST",
        "/api/v1/runs?attempt=2",
        &headers,
        changed.to_string().as_bytes(),
    );
    assert_eq!(
        (status, &body["error"]["query"]),
        (422, &json!("attempt")),
        "{body}"
    );
    // The token is checked first, whatever the query.
    let (status, _) = server.request(
        "POST",
        "/api/v1/runs?attempt=2",
        &[("content-type", "application/json")],
        changed.to_string().as_bytes(),
    );
    assert_eq!(status, 401);
    let (_, stored) = server.get(&format!("/api/v1/repos/{REPO}/runs/{second}"));
    assert_eq!(stored["attempt"], 2, "{stored}");

    // Round trip: the stored run reads back as what was sent.
    let (status, mut stored) = server.get(&format!("/api/v1/repos/{REPO}/runs/{id}"));
    assert_eq!(status, 200);
    stored.as_object_mut().unwrap().remove("id");
    assert_eq!(stored, run);
    let (status, runs) = server.get(&format!("/api/v1/repos/{REPO}/runs"));
    assert_eq!((status, runs.as_array().unwrap().len()), (200, 2));
    assert_eq!(server.get("/healthz"), (200, json!({"status": "ok"})));
    assert_eq!(server.get(&format!("/api/v1/repos/{REPO}/runs/99")).0, 404);

    // A revoked token no longer works.
    let db_arg = db.to_str().unwrap();
    let output = benchgate(dir.path(), &["token", "revoke", "1", "--db", db_arg]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.upload(&good, &run).0, 401);
    let listed = stdout(&benchgate(dir.path(), &["token", "list", "--db", db_arg]));
    assert!(
        listed.contains(&format!("1\t{REPO}\tcreated ")) && listed.contains("\trevoked "),
        "{listed}"
    );
    assert!(!listed.contains("bgt_"), "tokens are never shown again");
}

#[test]
fn malformed_and_oversized_uploads_name_the_fault() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let run = document(dir.path(), 1);
    let server = Server::start(&db, &["--body-limit", "200000"], None);

    let mut bad = run.clone();
    bad["measurements"][2]["samples"]["times"][1] = json!(-5.0);
    let (status, body) = server.upload(&good, &bad);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "measurements[2].samples.times[1]");
    assert_eq!(
        body["error"]["message"],
        "is -5; times must be finite and not negative"
    );
    // Finite but absurd, and an unknown enum: refused as over ingest, naming the field.
    let mut absurd = run.clone();
    absurd["measurements"][1]["median"]["point"] = json!(1.7e308);
    let (status, body) = server.upload(&good, &absurd);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "measurements[1].median.point");
    let mut bogus = run.clone();
    bogus["measurements"][0]["sampling_mode"] = json!("Bogus");
    let (status, body) = server.upload(&good, &bogus);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "measurements[0].sampling_mode");
    let mut missing = run.clone();
    missing.as_object_mut().unwrap().remove("commit");
    let (status, body) = server.upload(&good, &missing);
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("commit")),
        "{body}"
    );
    let mut forged = run.clone();
    forged["profile"]["cpu_brand"] = json!("Faster CPU");
    let (status, body) = server.upload(&good, &forged);
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("fingerprint")),
        "{body}"
    );
    let (status, body) = server.request(
        "POST",
        "/api/v1/runs",
        &[("authorization", &format!("Bearer {good}"))],
        b"{not json",
    );
    assert_eq!(status, 422, "{body}");

    // Over the limit, raw or once un-gzipped.
    let mut big = run.clone();
    let padding: Vec<f64> = (0..40_000).map(f64::from).collect();
    big["measurements"][0]["samples"]["iters"] = json!(padding);
    let (status, body) = server.upload(&good, &big);
    assert_eq!(
        (status, &body["error"]["status"]),
        (413, &json!(413)),
        "{body}"
    );
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(&vec![b' '; 1_000_000]).unwrap();
    let bomb = gzip.finish().unwrap();
    assert!(bomb.len() < 200_000);
    let bearer = format!("Bearer {good}");
    let (status, body) = server.request(
        "POST",
        "/api/v1/runs",
        &[("authorization", &bearer), ("content-encoding", "gzip")],
        &bomb,
    );
    assert_eq!(
        (status, &body["error"]["header"]),
        (413, &json!("content-encoding")),
        "{body}"
    );
    assert_eq!(
        server.get(&format!("/api/v1/repos/{REPO}/runs")).1,
        json!([])
    );
}

#[test]
fn five_hundred_concurrent_uploads_of_fifty_runs_store_fifty() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    five_hundred_uploads_of_fifty_runs(&dir, db.to_str().unwrap(), 1);
}

#[test]
fn two_instances_on_one_postgres_take_five_hundred_uploads_and_store_fifty() {
    let _load = loading_the_machine();
    let Some(database) = postgres::FreshDatabase::create("five_hundred_uploads") else {
        return;
    };
    let (dir, _) = setup();
    five_hundred_uploads_of_fifty_runs(&dir, &database.url, 2);
}

/// How long the 500 uploads' retries may take in all.
const UPLOADS_DRAIN: std::time::Duration = std::time::Duration::from_secs(300);

/// 500 uploads at once of 50 distinct runs, split across `instances` servers on the store
/// `db`: exactly 50 are created, 450 found unchanged, and each run holds its 30 benchmarks.
fn five_hundred_uploads_of_fifty_runs(dir: &tempfile::TempDir, db: &str, instances: usize) {
    let good = token(dir.path(), db, REPO);
    let base = document(dir.path(), 0);
    let servers: Vec<Arc<Server>> = (0..instances)
        .map(|_| Arc::new(Server::start(db, &[], None)))
        .collect();
    let documents: Vec<String> = (0..50)
        .map(|i| {
            let mut d = base.clone();
            d["commit"] = json!(format!("{:040x}", 1000 + i));
            d.to_string()
        })
        .collect();
    let barrier = Arc::new(Barrier::new(500));
    let handles: Vec<_> = (0..500)
        .map(|k| {
            let server = servers[k % instances].clone();
            let (barrier, token) = (barrier.clone(), good.clone());
            let body = documents[k % 50].clone();
            std::thread::spawn(move || {
                barrier.wait();
                let started = std::time::Instant::now();
                let bearer = format!("Bearer {token}");
                // As benchgate's client does: a 503 (too many uploads at once) is retried. Here
                // until every upload lands or five minutes pass: on a machine loaded beyond the
                // two busy loops, the uploads in flight took a minute to drain (243,182 503s).
                let mut shed = 0;
                loop {
                    let answer = server.request(
                        "POST",
                        "/api/v1/runs",
                        &[("authorization", &bearer)],
                        body.as_bytes(),
                    );
                    if answer.0 != 503 || started.elapsed() > UPLOADS_DRAIN {
                        return (answer, shed);
                    }
                    shed += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            })
        })
        .collect();
    let answers: Vec<((u16, Value), usize)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    let shed: usize = answers.iter().map(|(_, shed)| shed).sum();
    eprintln!("{shed} uploads were answered 503 and retried");
    let results: Vec<(u16, Value)> = answers.into_iter().map(|(answer, _)| answer).collect();
    for server in &servers {
        let (now, peak) = memory_mib(server.child.id());
        eprintln!("serve memory after 500 uploads: peak {peak:.0} MiB, {now:.0} MiB now");
    }
    let created = results.iter().filter(|(s, _)| *s == 201).count();
    let unchanged = results.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(
        (created, unchanged),
        (50, 450),
        "{:?}",
        results.iter().find(|(s, _)| *s >= 300)
    );
    for server in &servers {
        let (_, runs) = server.get(&format!("/api/v1/repos/{REPO}/runs"));
        assert_eq!(
            runs.as_array().unwrap().len(),
            50,
            "as every instance sees it"
        );
    }
    drop(servers);
    // No duplicate measurement: each run holds exactly its benchmarks.
    let output = benchgate(dir.path(), &["runs", "--db", db, "--format", "json"]);
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    for run in listed.as_array().unwrap() {
        let id = run["id"].to_string();
        let shown = benchgate(dir.path(), &["show", &id, "--db", db, "--format", "json"]);
        let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(shown["measurements"].as_array().unwrap().len(), 30);
        assert_eq!(run["n_benchmarks"], 30);
    }
}

#[test]
fn a_killed_server_leaves_no_partial_run() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let run = document(dir.path(), 1).to_string();
    let mut server = Server::start(&db, &[], None);
    // Half an upload, then SIGKILL.
    let mut stream = TcpStream::connect(&server.address).unwrap();
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {good}\r\nContent-Length: {}\r\n\r\n",
        run.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&run.as_bytes()[..run.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.kill();
    // And a storm of complete uploads, killed while they are being stored.
    let mut server = Server::start(&db, &[], None);
    let address = server.address.clone();
    let storm: Vec<_> = (0..20)
        .map(|i| {
            let mut d: Value = serde_json::from_str(&run).unwrap();
            d["commit"] = json!(format!("{:040x}", 5000 + i));
            let (address, token) = (address.clone(), good.clone());
            std::thread::spawn(move || {
                let Ok(mut stream) = TcpStream::connect(&address) else { return };
                let body = d.to_string();
                let head = format!(
                    "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
                let _ = stream.read_to_end(&mut Vec::new());
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(150));
    server.kill();
    for handle in storm {
        handle.join().unwrap();
    }
    let server = Server::start(&db, &[], None);
    let (_, runs) = server.get(&format!("/api/v1/repos/{REPO}/runs"));
    for run in runs.as_array().unwrap() {
        let (status, stored) = server.get(&format!("/api/v1/repos/{REPO}/runs/{}", run["id"]));
        assert_eq!(status, 200);
        assert_eq!(
            stored["measurements"].as_array().unwrap().len(),
            30,
            "a whole run or none"
        );
        assert_ne!(
            stored["commit"],
            json!(format!("{:040x}", 1)),
            "the cut-off upload is not stored"
        );
    }
}

fn signature(body: &[u8]) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    format!(
        "sha256={}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

#[test]
fn webhooks_are_verified_deduplicated_and_worked_on_after_the_answer() {
    let _load = loading_the_machine();
    let github = FakeGitHub::start("");
    github.data().permissions.insert("maint".into(), "admin");
    github.data().pulls.insert(7, "2".repeat(40));
    let (_dir, db) = setup();
    let mut server = Server::start(&db, &[], Some(&github));
    let event = fake_github::issue_comment_event(
        "created",
        777,
        "maint",
        "User",
        "/benchgate override known noisy runner",
        true,
    );
    let body = event.to_string().into_bytes();
    let deliver = |server: &Server, signature: &str| {
        server.request(
            "POST",
            "/github/webhook",
            &[
                ("x-github-event", "issue_comment"),
                ("x-github-delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"),
                ("x-hub-signature-256", signature),
                ("content-type", "application/json"),
            ],
            &body,
        )
    };
    let (status, reply) = deliver(&server, &signature(b"something else"));
    assert_eq!(
        (status, &reply["error"]["header"]),
        (401, &json!("x-hub-signature-256"))
    );
    let (status, reply) = server.request(
        "POST",
        "/github/webhook",
        &[("x-github-event", "ping")],
        &body,
    );
    assert_eq!(status, 401, "{reply}");
    // A 10 KB delivery id is said to be too long, not missing.
    let long_id = "x".repeat(10_000);
    let (status, reply) = server.request(
        "POST",
        "/github/webhook",
        &[
            ("x-github-event", "issue_comment"),
            ("x-github-delivery", &long_id),
            ("x-hub-signature-256", &signature(&body)),
        ],
        &body,
    );
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["header"], "x-github-delivery");
    assert_eq!(
        reply["error"]["message"],
        "the delivery id is 10000 bytes long; at most 100"
    );
    assert!(
        github.requests().is_empty(),
        "nothing was done for bad signatures"
    );

    let (status, reply) = deliver(&server, &signature(&body));
    assert_eq!(
        (status, &reply["status"]),
        (202, &json!("queued")),
        "{reply}"
    );
    let (status, reply) = deliver(&server, &signature(&body));
    assert_eq!((status, &reply["status"]), (200, &json!("duplicate")));
    // The work happens after the answer, and the log line after GitHub's reply: wait for both.
    wait_until("the check run to turn success", || {
        github
            .data()
            .check_runs
            .first()
            .is_some_and(|r| r["conclusion"] == "success")
    });
    let run = github.data().check_runs[0].clone();
    assert_eq!(
        run["output"]["title"],
        "Overridden by @maint: known noisy runner"
    );
    server.wait_for_log("overridden at 2222");
    // SIGTERM: a clean stop.
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    server.wait_for_log("stopped; every request in flight finished");
    // The redelivery after a restart is still a duplicate; nothing is done twice.
    let server = Server::start(&db, &[], Some(&github));
    assert_eq!(deliver(&server, &signature(&body)).1["status"], "duplicate");
    assert_eq!(github.data().check_runs.len(), 1);
}

#[test]
fn compare_and_series_answer_from_the_store_and_upload_is_safe_to_repeat() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let server = Server::start(&db, &[], None);
    let collector = format!("http://{}", server.address);
    // A modern tree (sample.json with named arrays), which `scaled_copy` can scale.
    let modern = "dicethedev__MerkleForge/target/criterion";
    let tree = corpus(modern);
    let slower = scaled_copy(modern, 1.4);
    let upload = |path: &Path, commit: &str, more: &[&str]| {
        let mut args = vec![
            "upload",
            path.to_str().unwrap(),
            "--collector",
            &collector,
            "--token",
            &good,
            "--repo",
            REPO,
            "--commit",
            commit,
        ];
        args.extend_from_slice(more);
        benchgate(dir.path(), &args)
    };
    let mut ids = Vec::new();
    for (i, path) in [tree.as_path(), slower.path()].into_iter().enumerate() {
        let commit = format!("{:040x}", 10 + i);
        let output = upload(path, &commit, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(
            stderr(&output).contains(": created as run"),
            "{}",
            stderr(&output)
        );
        let again = upload(path, &commit, &[]);
        assert!(
            stderr(&again).contains(": unchanged as run"),
            "{}",
            stderr(&again)
        );
        ids.push(stdout(&output).trim().to_owned());
    }
    let (status, summary) = server.get(&format!(
        "/api/v1/repos/{REPO}/compare?base={}&head={}",
        ids[0], ids[1]
    ));
    assert_eq!(status, 200, "{summary}");
    assert_eq!(summary["schema_version"], 1);
    assert_eq!(summary["benchmarks"].as_array().unwrap().len(), 30);
    let ratio = summary["benchmarks"][0]["ratio"].as_f64().unwrap();
    assert!((ratio - 1.4).abs() < 1e-9, "{ratio}");

    let (_, run) = server.get(&format!("/api/v1/repos/{REPO}/runs/{}", ids[0]));
    let benchmark = run["measurements"][0]["id"].as_str().unwrap().to_owned();
    let fingerprint = run["fingerprint"].as_str().unwrap().to_owned();
    let (status, series) = server.get(&format!(
        "/api/v1/repos/{REPO}/series?benchmark={}&fingerprint={fingerprint}",
        benchmark.replace('/', "%2F").replace(' ', "%20")
    ));
    assert_eq!(status, 200, "{series}");
    let points = series["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let first = points[0]["median"].as_f64().unwrap();
    assert_eq!(
        first,
        run["measurements"][0]["median"]["point"].as_f64().unwrap()
    );
    assert!((points[1]["median"].as_f64().unwrap() / first - 1.4).abs() < 1e-9);
    let (status, missing) = server.get(&format!("/api/v1/repos/{REPO}/series?benchmark=x"));
    assert_eq!(
        (status, &missing["error"]["query"]),
        (422, &json!("fingerprint"))
    );
    // The slower tree under the first commit (a nightly with no new commit, as the Action
    // uploads it): its second attempt, and once stored, unchanged.
    let commit = format!("{:040x}", 10);
    let output = upload(slower.path(), &commit, &["--attempt", "next"]);
    assert!(
        stderr(&output).contains(": created as run"),
        "{}",
        stderr(&output)
    );
    let nightly = stdout(&output).trim().to_owned();
    let (_, stored) = server.get(&format!("/api/v1/repos/{REPO}/runs/{nightly}"));
    assert_eq!(
        (&stored["commit"], &stored["attempt"]),
        (&json!(commit), &json!(2))
    );
    let again = upload(slower.path(), &commit, &["--attempt", "next"]);
    assert!(
        stderr(&again).contains(&format!(": unchanged as run {nightly}")),
        "{}",
        stderr(&again)
    );

    // A wrong token is a clear error, not a retry loop.
    let output = benchgate(
        dir.path(),
        &[
            "upload",
            tree.to_str().unwrap(),
            "--collector",
            &collector,
            "--token",
            "nope",
            "--repo",
            REPO,
            "--commit",
            &"a".repeat(40),
        ],
    );
    assert_refused(
        &output,
        &["HTTP 401", "`authorization`", "unknown or revoked token"],
    );
}

#[test]
fn a_delivery_accepted_before_a_restart_is_worked_on_after_it() {
    let _load = loading_the_machine();
    let github = FakeGitHub::start("");
    github.data().permissions.insert("maint".into(), "write");
    github.data().pulls.insert(7, "2".repeat(40));
    let (_dir, db) = setup();
    // As a server killed between its 202 and the work would leave it: stored, pending.
    let event = fake_github::issue_comment_event(
        "created",
        888,
        "maint",
        "User",
        "/benchgate override flaky runner",
        true,
    );
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = benchgate_collector::Store::open(&db).await.unwrap();
        assert!(
            store
                .record_delivery("d-1", "issue_comment", event.to_string().as_bytes())
                .await
                .unwrap()
        );
        store.close().await;
    });
    let server = Server::start(&db, &[], Some(&github));
    server.wait_for_log("delivery=d-1 event=issue_comment outcome=overridden at 2222");
    assert_eq!(github.data().check_runs[0]["conclusion"], "success");
    drop(server);
    let state = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = benchgate_collector::Store::open(&db).await.unwrap();
        let state = store.delivery("d-1").await.unwrap();
        store.close().await;
        state
    });
    let state = state.unwrap();
    assert_eq!(state.state, "done");
    assert_eq!(
        state.outcome.as_deref(),
        Some("overridden at 2222222222222222222222222222222222222222")
    );
}

#[test]
fn two_instances_on_one_postgres_work_each_delivery_once() {
    let _load = loading_the_machine();
    let Some(database) = postgres::FreshDatabase::create("deliveries_once") else {
        return;
    };
    let github = FakeGitHub::start("");
    github.data().permissions.insert("maint".into(), "write");
    github.data().pulls.insert(7, "2".repeat(40));
    // Accepted before both instances start, as after an outage: both workers find all eight
    // pending at once, and each delivery must be worked on by one of them.
    let ids: Vec<String> = (0..8).map(|i| format!("d-{i}")).collect();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let location = benchgate_collector::Location::parse(&database.url);
        let store = benchgate_collector::Store::connect(&location)
            .await
            .unwrap();
        for (i, id) in ids.iter().enumerate() {
            let event = fake_github::issue_comment_event(
                "created",
                900 + i as u64,
                "maint",
                "User",
                &format!("/benchgate override flaky runner {i}"),
                true,
            );
            let body = event.to_string();
            assert!(
                store
                    .record_delivery(id, "issue_comment", body.as_bytes())
                    .await
                    .unwrap()
            );
        }
        store.close().await;
    });
    let servers = [
        Server::start(&database.url, &[], Some(&github)),
        Server::start(&database.url, &[], Some(&github)),
    ];
    let logs = |servers: &[Server]| -> String {
        servers
            .iter()
            .map(|s| s.log.lock().unwrap().clone())
            .collect()
    };
    wait_until("eight deliveries worked on", || {
        logs(&servers)
            .matches("event=issue_comment outcome=overridden at")
            .count()
            >= 8
    });
    let logs = logs(&servers);
    drop(servers);
    for id in &ids {
        assert_eq!(
            logs.matches(&format!("delivery={id} event=issue_comment"))
                .count(),
            1,
            "{id} worked on once across both instances:\n{logs}"
        );
    }
    let check_run_writes = github
        .data()
        .seen
        .iter()
        .filter(|r| r.method != "GET" && r.path.contains("/check-runs"))
        .count();
    assert_eq!(
        check_run_writes, 8,
        "one check-run write per delivery, none twice"
    );
}

/// A process's memory from `/proc/PID/status`: (resident now, peak resident), in MiB.
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kib| kib.parse::<f64>().ok())
            .unwrap()
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Sends `head` (request line and headers, no body) and reads the answer until the server
/// closes: (status, JSON body, seconds it took).
fn answer_to_head(server: &Server, head: &str) -> (u16, Value, f64) {
    let started = std::time::Instant::now();
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response);
    let status: u16 = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::Null),
        started.elapsed().as_secs_f64(),
    )
}

#[test]
fn silent_and_slow_clients_are_cut_off_and_do_not_starve_the_service() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let server = Server::start(
        &db,
        &["--header-timeout", "1s", "--body-timeout", "1s"],
        None,
    );
    // 200 connections that send nothing, and 200 that send half their headers.
    let mut sockets: Vec<TcpStream> = (0..400)
        .map(|i| {
            let mut stream = TcpStream::connect(&server.address).unwrap();
            if i % 2 == 1 {
                stream
                    .write_all(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthor")
                    .unwrap();
            }
            stream
        })
        .collect();
    // The service still answers while they hang.
    assert_eq!(server.get("/healthz").0, 200);
    // Each is closed by the server after the header timeout: the read sees the end.
    for stream in &mut sockets {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut buffer = [0u8; 512];
        match stream.read(&mut buffer) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("a silent connection was left open: {e}"),
        }
    }
    // A body that stops arriving: 408 in the one JSON shape.
    let (status, body, _) = answer_to_head(
        &server,
        &format!(
            "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {good}\r\nContent-Length: 1000\r\n\r\n{{\"schema"
        ),
    );
    assert_eq!(status, 408, "{body}");
    assert_eq!(body["error"]["message"], "the body did not arrive in time");
}

#[test]
fn floods_are_refused_from_the_headers_before_any_body_is_read() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let server = Arc::new(Server::start(&db, &[], None));
    let (_, peak_before) = memory_mib(server.child.id());
    // 40 tokenless uploads announcing 31 MiB each, at once: each is answered 401 from its
    // headers, without the body (which never comes).
    let barrier = Arc::new(Barrier::new(40));
    let answers: Vec<(u16, Value, f64)> = (0..40)
        .map(|_| {
            let (server, barrier) = (server.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                answer_to_head(
                    &server,
                    "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 32505856\r\n\r\n",
                )
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    for (status, body, seconds) in &answers {
        assert_eq!(*status, 401, "{body}");
        assert_eq!(body["error"]["header"], "authorization");
        assert!(*seconds < 10.0, "answered without waiting for the body");
    }
    // With a token, a body announced over the limit is refused on its Content-Length.
    let (status, body, _) = answer_to_head(
        &server,
        &format!(
            "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {good}\r\nContent-Length: 52428800\r\n\r\n"
        ),
    );
    assert_eq!(
        (status, &body["error"]["header"]),
        (413, &json!("content-length"))
    );
    let (now, peak) = memory_mib(server.child.id());
    eprintln!(
        "serve memory: peak {peak_before:.0} MiB before the flood, {peak:.0} MiB after; {now:.0} MiB now"
    );
    assert!(
        peak < peak_before + 64.0,
        "no body was buffered: {peak} MiB"
    );
}

#[test]
fn a_store_locked_by_another_process_answers_503_with_retry_after_and_no_internals() {
    let _load = loading_the_machine();
    let (dir, db) = setup();
    let good = token(dir.path(), &db, REPO);
    let run = document(dir.path(), 1);
    let server = Server::start(&db, &["--store-timeout", "1s"], None);
    // Another process's writer holds the lock.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut holder = runtime
        .block_on(<sqlx::SqliteConnection as sqlx::Connection>::connect(
            &format!("sqlite://{}", db.display()),
        ))
        .unwrap();
    runtime
        .block_on(sqlx::query("BEGIN EXCLUSIVE").execute(&mut holder))
        .unwrap();
    let body = run.to_string();
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {good}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, text) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 503"), "{response}");
    assert!(
        head.to_ascii_lowercase().contains("\r\nretry-after: 1"),
        "{head}"
    );
    let error: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        error["error"]["message"],
        "the store is busy storing the run; retry after 1 s"
    );
    assert!(
        !text.contains(db.to_str().unwrap()) && !text.contains("code"),
        "{text}"
    );
    // Once the lock is gone, the same upload is stored.
    runtime
        .block_on(sqlx::query("ROLLBACK").execute(&mut holder))
        .unwrap();
    assert_eq!(server.upload(&good, &run).0, 201);
}

#[test]
fn a_bad_query_string_is_refused_in_the_json_shape() {
    let _load = loading_the_machine();
    let (_dir, db) = setup();
    let server = Server::start(&db, &[], None);
    let (status, body) = server.get(&format!(
        "/api/v1/repos/{REPO}/compare?base=1&base=2&head=3"
    ));
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], 400);
    assert_eq!(body["error"]["query"], "base=1&base=2&head=3");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duplicate field `base`"),
        "{body}"
    );
}

#[test]
fn the_log_is_one_json_object_per_line_with_each_request_s_fields() {
    let _load = loading_the_machine();
    let (_dir, db) = setup();
    let server = Server::start(&db, &["--log-format", "json"], None);
    assert_eq!(server.get("/healthz").0, 200);
    let (status, _) = server.request(
        "POST",
        "/api/v1/runs",
        &[("authorization", "Bearer nope")],
        b"{}",
    );
    assert_eq!(status, 401);
    server.wait_for_log(r#""status":401"#);
    let log = server.log.lock().unwrap().clone();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: not JSON: {line}")))
        .collect();
    assert_eq!(lines[0]["message"], "listening");
    assert_eq!(lines[0]["engine"], "SQLite");
    assert_eq!(lines[0]["store"], db.to_str().unwrap());
    let request = |method: &str, uri: &str| {
        lines
            .iter()
            .find(|l| l["span"]["method"] == method && l["span"]["uri"] == uri)
            .unwrap_or_else(|| panic!("no line for {method} {uri} in {log}"))
            .clone()
    };
    let health = request("GET", "/healthz");
    assert_eq!(
        (
            &health["level"],
            &health["status"],
            &health["span"]["version"]
        ),
        (&json!("INFO"), &json!(200), &json!("HTTP/1.1"))
    );
    assert!(
        health["latency"].as_str().unwrap().ends_with(" ms"),
        "{health}"
    );
    assert!(
        health["timestamp"].as_str().unwrap().ends_with('Z'),
        "{health}"
    );
    assert_eq!(request("POST", "/api/v1/runs")["status"], 401);
    assert!(!log.contains("nope"), "no token in the log: {log}");
}
