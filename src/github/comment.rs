//! benchgate's one sticky comment on a pull request: found by its hidden marker and author,
//! updated, or created once.

use std::time::Duration;

use benchgate_gate::github_text::COMMENT_MARKER;

use super::{ApiError, GitHub};

/// Updates benchgate's comment on `pr` (found by its hidden marker and its author), or creates
/// it if there is none. A create whose response was lost is looked for before it is repeated.
pub async fn upsert_comment(
    github: &GitHub,
    pr: u64,
    body: &str,
    author: Option<&str>,
    mut listed: Option<Vec<super::api::Comment>>,
) -> Result<(u64, CommentChange), ApiError> {
    let mut attempt = 0;
    loop {
        // The comments the caller has just read, the first time; fresh ones after a retry.
        let comments = match listed.take() {
            Some(comments) => comments,
            None => github.comments(pr).await?,
        };
        let ours = sticky(&comments, author);
        if let Some(comment) = ours {
            // Found after a create whose answer was lost: that create made it.
            let posted = attempt > 0;
            if comment.body.as_deref() == Some(body) {
                let change = if posted {
                    CommentChange::Created
                } else {
                    CommentChange::Unchanged
                };
                return Ok((comment.id, change));
            }
            github.update_comment(comment.id, body).await?;
            return Ok((comment.id, CommentChange::Updated));
        }
        match github.create_comment(pr, body).await {
            Ok(comment) => return Ok((comment.id, CommentChange::Created)),
            Err(e) if e.is_transient() && attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// benchgate's sticky comment among a pull request's: the hidden marker, written by `author`
/// (or, without one, by a bot account).
pub(super) fn sticky<'a>(
    comments: &'a [super::api::Comment],
    author: Option<&str>,
) -> Option<&'a super::api::Comment> {
    comments.iter().find(|c| {
        c.body
            .as_deref()
            .is_some_and(|b| b.starts_with(COMMENT_MARKER))
            && match author {
                Some(login) => c.user.login == login,
                None => c.user.kind.as_deref() == Some("Bot"),
            }
    })
}

/// What [`upsert_comment`] did to the sticky comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentChange {
    /// There was none: it was created.
    Created,
    /// Its body was replaced.
    Updated,
    /// It already said this.
    Unchanged,
}

impl CommentChange {
    /// For the log line: `created`, `updated`, `already up to date`.
    pub fn as_str(self) -> &'static str {
        match self {
            CommentChange::Created => "created",
            CommentChange::Updated => "updated",
            CommentChange::Unchanged => "already up to date",
        }
    }
}
