//! Package sources as pi 0.73.1 reads them: `npm:<name>[@version]`, git URLs (`git:` shorthands
//! and protocol URLs, `@ref` pinning) and local paths.

use std::sync::LazyLock;

/// A parsed package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    /// `npm:<spec>`.
    Npm(NpmSource),
    /// A git repository.
    Git(GitSource),
    /// A file or directory on disk (relative paths are relative to the settings file's directory).
    Local(String),
}

/// `npm:<spec>`: the spec as npm takes it, split into name and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// What follows `npm:` (trimmed), passed to `npm install` as it is.
    pub spec: String,
    /// The package name (`@scope/name`).
    pub name: String,
    /// The version after `@`, when given: the package is pinned.
    pub version: Option<String>,
}

/// A git source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// The URL `git clone` gets.
    pub repo: String,
    /// The host (no port): the first directory of the install path.
    pub host: String,
    /// The repository path on the host (no `.git`).
    pub path: String,
    /// The ref after `@` (or `#`): the package is pinned to it.
    pub git_ref: Option<String>,
}

impl PackageSource {
    /// Parses a source as pi does: `npm:` first, then local paths (anything that does not start
    /// with `npm:`, `git:`, `github:`, `http:`, `https:` or `ssh:`), then git URLs; what is left is
    /// a local path too.
    ///
    /// ```
    /// use pi_coding_agent::packages::PackageSource;
    /// let PackageSource::Git(git) = PackageSource::parse("git:github.com/user/repo@v1") else { panic!() };
    /// assert_eq!((git.repo.as_str(), git.host.as_str(), git.path.as_str()), ("https://github.com/user/repo", "github.com", "user/repo"));
    /// assert_eq!(git.git_ref.as_deref(), Some("v1"));
    /// assert!(matches!(PackageSource::parse("./pkg"), PackageSource::Local(_)));
    /// ```
    pub fn parse(source: &str) -> PackageSource {
        if let Some(spec) = source.strip_prefix("npm:") {
            let spec = spec.trim();
            let (name, version) = split_npm_spec(spec);
            return PackageSource::Npm(NpmSource {
                spec: spec.to_owned(),
                name,
                version,
            });
        }
        if is_local_path(source) {
            return PackageSource::Local(source.to_owned());
        }
        match parse_git_url(source) {
            Some(git) => PackageSource::Git(git),
            None => PackageSource::Local(source.to_owned()),
        }
    }

    /// Whether a version or ref pins it (`pi update` skips it).
    pub fn pinned(&self) -> bool {
        match self {
            PackageSource::Npm(npm) => npm.version.is_some(),
            PackageSource::Git(git) => git.git_ref.is_some(),
            PackageSource::Local(_) => false,
        }
    }
}

/// Not a package source or URL: pi's `isLocalPath`.
pub(crate) fn is_local_path(value: &str) -> bool {
    let trimmed = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|prefix| trimmed.starts_with(prefix))
}

/// `name[@version]` with an optional `@scope/`.
fn split_npm_spec(spec: &str) -> (String, Option<String>) {
    static SPEC: LazyLock<Option<regex::Regex>> =
        LazyLock::new(|| regex::Regex::new(r"^(@?[^@]+(?:/[^@]+)?)(?:@(.+))?$").ok());
    let Some(captures) = SPEC.as_ref().and_then(|re| re.captures(spec)) else {
        return (spec.to_owned(), None);
    };
    let name = captures.get(1).map_or(spec, |m| m.as_str()).to_owned();
    (name, captures.get(2).map(|m| m.as_str().to_owned()))
}

/// A URL split at the `@ref` of its path.
struct Split {
    repo: String,
    git_ref: Option<String>,
}

fn split_ref(url: &str) -> Split {
    let whole = || Split {
        repo: url.to_owned(),
        git_ref: None,
    };
    let split_path = |prefix: &str, path: &str| match path.find('@') {
        Some(at) if at > 0 && at + 1 < path.len() => Split {
            repo: format!("{prefix}{}", &path[..at]),
            git_ref: Some(path[at + 1..].to_owned()),
        },
        _ => whole(),
    };
    if let Some((host, path)) = scp_like(url) {
        return split_path(&format!("git@{host}:"), path);
    }
    if let Some(scheme_end) = url.find("://") {
        let after = &url[scheme_end + 3..];
        let (authority, path) = after.split_once('/').unwrap_or((after, ""));
        let path = path.trim_start_matches('/');
        return split_path(&format!("{}{authority}/", &url[..scheme_end + 3]), path);
    }
    match url.split_once('/') {
        Some((host, path)) => split_path(&format!("{host}/"), path),
        None => whole(),
    }
}

/// `git@host:path`.
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("git@")?;
    let (host, path) = rest.split_once(':')?;
    (!host.is_empty() && !path.is_empty()).then_some((host, path))
}

/// A git source from `source`: with `git:`, every shorthand pi accepts; without it only
/// `http(s)://`, `ssh://` and `git://` URLs.
pub(crate) fn parse_git_url(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (has_prefix, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    if !has_prefix && !has_protocol(url) {
        return None;
    }
    let split = split_ref(url);
    if let Some(hosted) = hosted(&split) {
        return Some(hosted);
    }
    generic(&split)
}

fn has_protocol(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    ["http://", "https://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// The well-known hosts (GitHub, GitLab, Bitbucket) and GitHub's `user/repo` shortcut, as the
/// `hosted-git-info` package pi uses recognizes them.
fn hosted(split: &Split) -> Option<GitSource> {
    let (without_fragment, fragment) = match split.repo.split_once('#') {
        Some((repo, fragment)) => (repo, Some(fragment.to_owned()).filter(|f| !f.is_empty())),
        None => (split.repo.as_str(), None),
    };
    let (host, path) = if let Some((host, path)) = scp_like(without_fragment) {
        (host.to_owned(), path.to_owned())
    } else if let Some(scheme_end) = without_fragment.find("://") {
        let scheme = without_fragment[..scheme_end].to_ascii_lowercase();
        if !["http", "https", "ssh", "git", "git+ssh", "git+https"].contains(&scheme.as_str()) {
            return None;
        }
        let after = &without_fragment[scheme_end + 3..];
        let (authority, path) = after.split_once('/')?;
        let host = authority.rsplit('@').next().unwrap_or(authority);
        (host.to_owned(), path.to_owned())
    } else {
        let segments: Vec<&str> = without_fragment.split('/').collect();
        if segments.len() == 2 && segments.iter().all(|s| !s.is_empty() && !s.contains(':')) {
            // GitHub's `user/repo` shortcut (any two segments, as hosted-git-info reads them).
            let git_ref = fragment.or_else(|| split.git_ref.clone());
            return Some(GitSource {
                repo: format!("https://{}", split.repo),
                host: "github.com".to_owned(),
                path: format!("{}/{}", segments[0], segments[1].trim_end_matches(".git")),
                git_ref,
            });
        }
        let (host, path) = without_fragment.split_once('/')?;
        (host.to_owned(), path.to_owned())
    };
    let host = host.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let (project_path, tree_ref) = match host.as_str() {
        "github.com" | "bitbucket.org" => {
            if segments.len() < 2 {
                return None;
            }
            let tree_ref =
                (host == "github.com" && segments.len() > 3 && segments[2] == "tree").then(|| segments[3..].join("/"));
            if segments.len() > 2 && tree_ref.is_none() {
                return None;
            }
            (format!("{}/{}", segments[0], segments[1]), tree_ref)
        }
        "gitlab.com" => {
            let end = segments.iter().position(|s| *s == "-").unwrap_or(segments.len());
            if end < 2 {
                return None;
            }
            let tree_ref =
                (end + 2 < segments.len() && segments[end + 1] == "tree").then(|| segments[end + 2..].join("/"));
            (segments[..end].join("/"), tree_ref)
        }
        _ => return None,
    };
    let git_ref = fragment.or(tree_ref).or_else(|| split.git_ref.clone());
    let keeps_protocol = ["http://", "https://", "ssh://", "git://", "git@"]
        .iter()
        .any(|p| split.repo.starts_with(p));
    Some(GitSource {
        repo: if keeps_protocol {
            split.repo.clone()
        } else {
            format!("https://{}", split.repo)
        },
        host,
        path: project_path.trim_end_matches(".git").to_owned(),
        git_ref,
    })
}

/// Any other host: `git@host:path`, a protocol URL, or `host/path` (a host with a dot, or
/// `localhost`), cloned over HTTPS.
fn generic(split: &Split) -> Option<GitSource> {
    let mut repo = split.repo.clone();
    let (host, path) = if let Some((host, path)) = scp_like(&split.repo) {
        (host.to_owned(), path.to_owned())
    } else if has_protocol(&split.repo) {
        let scheme_end = split.repo.find("://")?;
        let after = &split.repo[scheme_end + 3..];
        let (authority, path) = after.split_once('/').unwrap_or((after, ""));
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        let host = match host_port.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(v6).to_owned(),
            None => host_port.split(':').next().unwrap_or(host_port).to_owned(),
        };
        (host.to_ascii_lowercase(), path.to_owned())
    } else {
        let (host, path) = split.repo.split_once('/')?;
        if !host.contains('.') && host != "localhost" {
            return None;
        }
        repo = format!("https://{}", split.repo);
        (host.to_owned(), path.to_owned())
    };
    let path = path
        .strip_suffix(".git")
        .unwrap_or(&path)
        .trim_start_matches('/')
        .to_owned();
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref: split.git_ref.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pi 0.73.1's `parseGitUrl` on the same inputs (run once with Node): repo, host, path, ref.
    /// repo, host, path, ref.
    type Parsed = (&'static str, &'static str, &'static str, Option<&'static str>);

    const PI_PARSES: &[(&str, Option<Parsed>)] = &[
        (
            "git:github.com/user/repo@v1",
            Some(("https://github.com/user/repo", "github.com", "user/repo", Some("v1"))),
        ),
        (
            "git:git@github.com:user/repo@v1",
            Some(("git@github.com:user/repo", "github.com", "user/repo", Some("v1"))),
        ),
        (
            "https://github.com/user/repo@v1",
            Some(("https://github.com/user/repo", "github.com", "user/repo", Some("v1"))),
        ),
        (
            "ssh://git@github.com/user/repo@v1",
            Some(("ssh://git@github.com/user/repo", "github.com", "user/repo", Some("v1"))),
        ),
        (
            "https://github.com/user/repo",
            Some(("https://github.com/user/repo", "github.com", "user/repo", None)),
        ),
        (
            "git:github.com/user/repo",
            Some(("https://github.com/user/repo", "github.com", "user/repo", None)),
        ),
        (
            "git:user/repo",
            Some(("https://user/repo", "github.com", "user/repo", None)),
        ),
        ("user/repo", None),
        (
            "git:git.test/user/demo",
            Some(("https://git.test/user/demo", "git.test", "user/demo", None)),
        ),
        (
            "https://git.test/user/demo@v1",
            Some(("https://git.test/user/demo", "git.test", "user/demo", Some("v1"))),
        ),
        (
            "git:localhost/a/b",
            Some(("https://localhost/a/b", "localhost", "a/b", None)),
        ),
        (
            "https://gitlab.com/group/sub/repo.git",
            Some((
                "https://gitlab.com/group/sub/repo.git",
                "gitlab.com",
                "group/sub/repo",
                None,
            )),
        ),
        (
            "git:gitlab.com/a/b@main",
            Some(("https://gitlab.com/a/b", "gitlab.com", "a/b", Some("main"))),
        ),
        (
            "http://127.0.0.1:8080/user/repo.git",
            Some(("http://127.0.0.1:8080/user/repo.git", "127.0.0.1", "user/repo", None)),
        ),
        ("git://example.org/a/b", None),
        ("git:file:///tmp/x/y", None),
        (
            "git:example.com/single",
            Some(("https://example.com/single", "github.com", "example.com/single", None)),
        ),
        (
            "https://github.com/user/repo.git",
            Some(("https://github.com/user/repo.git", "github.com", "user/repo", None)),
        ),
        (
            "git:github.com/user/repo#v2",
            Some(("https://github.com/user/repo#v2", "github.com", "user/repo", Some("v2"))),
        ),
        ("git@github.com:user/repo", None),
        (
            "git:bitbucket.org/u/r@x",
            Some(("https://bitbucket.org/u/r", "bitbucket.org", "u/r", Some("x"))),
        ),
        (
            "git:git@git.test:user/demo@v1",
            Some(("git@git.test:user/demo", "git.test", "user/demo", Some("v1"))),
        ),
        (
            "ssh://git@git.test:2222/user/demo",
            Some(("ssh://git@git.test:2222/user/demo", "git.test", "user/demo", None)),
        ),
        (
            "https://github.com/user/repo/tree/main",
            Some((
                "https://github.com/user/repo/tree/main",
                "github.com",
                "user/repo",
                Some("main"),
            )),
        ),
    ];

    #[test]
    fn git_urls_parse_as_pi_parses_them() {
        for (input, expected) in PI_PARSES {
            let parsed = parse_git_url(input);
            let got = parsed
                .as_ref()
                .map(|g| (g.repo.as_str(), g.host.as_str(), g.path.as_str(), g.git_ref.as_deref()));
            assert_eq!(got, *expected, "{input}");
        }
    }

    #[test]
    fn npm_specs() {
        let npm = |s: &str| match PackageSource::parse(s) {
            PackageSource::Npm(npm) => (npm.name, npm.version),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            npm("npm:@foo/bar@1.0.0"),
            ("@foo/bar".to_owned(), Some("1.0.0".to_owned()))
        );
        assert_eq!(npm("npm:pkg"), ("pkg".to_owned(), None));
        assert_eq!(npm("npm: @scope/x "), ("@scope/x".to_owned(), None));
        assert_eq!(
            npm("npm:demo@file:/tmp/d.tgz"),
            ("demo".to_owned(), Some("file:/tmp/d.tgz".to_owned()))
        );
        assert_eq!(npm("npm:/tmp/d.tgz"), ("/tmp/d.tgz".to_owned(), None));
        assert!(PackageSource::parse("npm:@foo/bar@1").pinned());
    }

    #[test]
    fn what_is_local() {
        for local in [
            "./pkg",
            "/abs",
            "pkg",
            "~/x",
            "git://example.org/a/b",
            "github:user/repo",
        ] {
            assert!(
                matches!(PackageSource::parse(local), PackageSource::Local(_)),
                "{local}"
            );
        }
    }

    proptest::proptest! {
        /// Whatever a user types parses (never panics), and a pinned git source has its ref.
        #[test]
        fn any_source_parses(source in ".{0,40}") {
            let parsed = PackageSource::parse(&source);
            if let PackageSource::Git(git) = &parsed {
                proptest::prop_assert!(!git.host.is_empty() && !git.path.is_empty());
                proptest::prop_assert_eq!(parsed.pinned(), git.git_ref.is_some());
            }
        }
    }
}
