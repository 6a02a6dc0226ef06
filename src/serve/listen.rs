//! The accept loop: hyper's HTTP/1 connections with a header read timeout (a client that sends
//! nothing, or half its headers, is cut off), a cap on open connections (at the cap, new ones
//! wait in the kernel's accept queue instead of taking file descriptors the server needs), and a
//! graceful shutdown that lets requests in flight finish.
//!
//! axum's `serve` sets no timer, so hyper's header timeout never fires there; this is the same
//! loop with hyper's and hyper-util's own builders (axum's `serve-with-hyper` example).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Open connections at most; well under the usual 1,024 file descriptors.
pub const MAX_CONNECTIONS: usize = 512;
/// How long requests in flight get to finish once shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `shutdown` completes, then waits (up to 30 s) for the
/// connections' requests in flight. A client gets `header_timeout` to send a request's headers,
/// from when the connection opens or the previous response was sent.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: not fatal.
                    tracing::warn!(error = %e, "accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A connection's end (closed, timed out, reset) is its own business.
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within 30 s of shutdown");
    }
}
