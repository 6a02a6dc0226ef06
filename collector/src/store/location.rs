//! Where a store is: a SQLite file (the default) or a PostgreSQL URL.

use std::fmt;
use std::path::PathBuf;

/// A store's location, as `--db` or `--database-url` name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An embedded SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database: `postgres://user[:password]@host[:port]/database[?options]`.
    Postgres(String),
}

impl Location {
    /// `postgres://…` or `postgresql://…` is a PostgreSQL database; `sqlite://PATH`,
    /// `sqlite:PATH` or any other text is a SQLite file.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Location::Postgres(text.to_owned());
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        Location::Sqlite(PathBuf::from(path))
    }

    /// Whether a store may be there without creating one: a SQLite file that exists, or any
    /// PostgreSQL database (the server says when it is not there).
    pub fn may_exist(&self) -> bool {
        match self {
            Location::Sqlite(path) => path.is_file(),
            Location::Postgres(_) => true,
        }
    }

    /// The engine's name, for messages: `SQLite` or `PostgreSQL`.
    pub fn engine(&self) -> &'static str {
        match self {
            Location::Sqlite(_) => "SQLite",
            Location::Postgres(_) => "PostgreSQL",
        }
    }
}

impl fmt::Display for Location {
    /// The file, or the URL with its password hidden: a location is shown in errors and logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&without_password(url)),
        }
    }
}

/// `url` with the password of its user info replaced by `***` (and any `password=` option).
/// By hand rather than with the `url` crate: two string splits, and the text is only shown.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{user_info}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => "password=***".to_owned(),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_postgres_and_anything_else_is_a_file() {
        assert_eq!(
            Location::parse("postgres://u@h/db"),
            Location::Postgres("postgres://u@h/db".into())
        );
        assert_eq!(
            Location::parse("postgresql://h/db"),
            Location::Postgres("postgresql://h/db".into())
        );
        assert_eq!(
            Location::parse("sqlite://a/b.db"),
            Location::Sqlite("a/b.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:b.db"),
            Location::Sqlite("b.db".into())
        );
        assert_eq!(
            Location::parse(".benchgate/benchgate.db"),
            Location::Sqlite(".benchgate/benchgate.db".into())
        );
    }

    #[test]
    fn passwords_are_never_shown() {
        let shown = Location::parse("postgres://ci:s3cret@db.example:5432/bench?sslmode=require")
            .to_string();
        assert_eq!(
            shown,
            "postgres://ci:***@db.example:5432/bench?sslmode=require"
        );
        let shown = Location::parse("postgres://db/bench?user=ci&password=s3cret").to_string();
        assert_eq!(shown, "postgres://db/bench?user=ci&password=***");
        assert_eq!(
            Location::parse("postgres://ci@db/bench").to_string(),
            "postgres://ci@db/bench"
        );
    }
}
