//! Git repositories through gitoxide (`gix`, pure Rust). A bare repository in the source's state
//! folder (`repo.git`) follows the remote's branches; a listing fetches into it, resolves the
//! branch and lists the files of its tree, each marked with its blob id, and a fetch reads a blob
//! from that repository without touching the network. `https://` and `http://` remotes go
//! through reqwest with rustls (gix gives connecting 20 s, and reqwest's default 30 s bounds each
//! wait for the server, so a stalled remote fails the listing instead of hanging it); for
//! `file://` gix runs `git-upload-pack`, as `git` itself does, so local remotes need Git
//! installed. Like `git`, gix reads the user's and the system's Git configuration (proxies,
//! `url.*.insteadOf`, credential helpers).

use crate::{Connector, ConnectorError, Listed, RemoteObject, SourceUrl};
use gix::bstr::{BStr, ByteSlice};
use gix::protocol::handshake::Ref;
use gix::remote::Direction;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Every branch of the remote, forced, so a branch rewound by a force push is followed.
const BRANCHES: &str = "+refs/heads/*:refs/remotes/origin/*";
const BRANCH_PREFIX: &str = "refs/heads/";

pub(crate) struct GitConnector {
    url: SourceUrl,
    remote: String,
    branch: Option<String>,
    path: PathBuf,
    /// Opened by the first listing or fetch, then shared by the download threads.
    repository: Mutex<Option<gix::ThreadSafeRepository>>,
}

impl GitConnector {
    pub(crate) fn new(
        remote: &str,
        branch: Option<&str>,
        state: &std::path::Path,
    ) -> Result<GitConnector, ConnectorError> {
        let url = SourceUrl::Git {
            remote: remote.to_string(),
            branch: branch.map(str::to_string),
        };
        gix::url::parse(remote.as_bytes().as_bstr()).map_err(|error| ConnectorError::BadUrl {
            url: url.to_string(),
            reason: error.to_string(),
        })?;
        Ok(GitConnector {
            url,
            remote: remote.to_string(),
            branch: branch.map(str::to_string),
            path: state.join("repo.git"),
            repository: Mutex::new(None),
        })
    }

    fn shown(&self) -> String {
        self.url.to_string()
    }

    /// The local repository, created empty on first use.
    fn repository(&self) -> Result<gix::Repository, ConnectorError> {
        let mut slot = self.repository.lock().map_err(|_| {
            ConnectorError::protocol(self.shown(), "a thread using the repository panicked")
        })?;
        if let Some(repository) = slot.as_ref() {
            return Ok(repository.to_thread_local());
        }
        let opened = if self.path.join("HEAD").is_file() {
            gix::open(&self.path)
        } else {
            std::fs::create_dir_all(&self.path)
                .map_err(|error| ConnectorError::io(self.path.display().to_string(), error))?;
            gix::init_bare(&self.path)
        }
        .map_err(|error| self.local_error(error))?;
        let opened = without_redirects(opened)
            .map_err(|error| ConnectorError::protocol(self.shown(), error.to_string()))?;
        *slot = Some(opened.clone().into_sync());
        Ok(opened)
    }

    /// Brings the local branches up to date and returns the commit the listed branch is at,
    /// `None` for a remote without commits.
    fn fetch_tip(
        &self,
        repository: &gix::Repository,
    ) -> Result<Option<gix::ObjectId>, ConnectorError> {
        let network = |error| self.remote_error(error);
        // Without a branch the remote's HEAD says which one; asking for it is what makes the
        // remote advertise it.
        let refspecs = match self.branch {
            Some(_) => vec![BRANCHES],
            None => vec![BRANCHES, "HEAD"],
        };
        let remote = repository
            .remote_at(self.remote.as_str())
            .and_then(|remote| remote.with_refspecs(refspecs, Direction::Fetch))
            .map_err(network)?
            .with_fetch_tags(gix::remote::fetch::Tags::None);
        let prepared = remote
            .connect(Direction::Fetch)
            .and_then(|connection| {
                connection.prepare_fetch(gix::progress::Discard, Default::default())
            })
            .map_err(network)?;
        // A missing branch is reported before a pack of the others is downloaded, and an empty
        // remote has nothing to download (gix refuses a fetch that matches no branch).
        let tip = self.tip(&prepared.ref_map().remote_refs)?;
        if tip.is_some() {
            prepared
                .receive(gix::progress::Discard, &AtomicBool::new(false))
                .map_err(network)?;
        }
        Ok(tip)
    }

    /// The commit the listed branch is at, `None` for a remote without commits.
    fn tip(&self, advertised: &[Ref]) -> Result<Option<gix::ObjectId>, ConnectorError> {
        match &self.branch {
            Some(branch) => {
                let name = format!("{BRANCH_PREFIX}{branch}");
                advertised
                    .iter()
                    .find_map(|reference| match reference.unpack() {
                        (full_name, Some(object), _) if full_name == name.as_str() => {
                            Some(Some(object.to_owned()))
                        }
                        _ => None,
                    })
                    .ok_or_else(|| {
                        ConnectorError::protocol(self.shown(), missing_branch(branch, advertised))
                    })
            }
            None => advertised
                .iter()
                .find_map(|reference| match reference {
                    Ref::Symbolic {
                        full_ref_name,
                        object,
                        ..
                    }
                    | Ref::Direct {
                        full_ref_name,
                        object,
                    } if full_ref_name == "HEAD" => Some(Some(*object)),
                    Ref::Unborn { full_ref_name, .. } if full_ref_name == "HEAD" => Some(None),
                    _ => None,
                })
                .ok_or_else(|| {
                    ConnectorError::protocol(
                        self.shown(),
                        "the remote names no default branch; add #BRANCH to the URL",
                    )
                }),
        }
    }

    /// Every file in the tree of `commit`: regular and executable files; symbolic links and
    /// submodules have no content of their own to index.
    fn files(
        &self,
        repository: &gix::Repository,
        commit: gix::ObjectId,
    ) -> Result<Vec<RemoteObject>, ConnectorError> {
        let local = |error| self.local_error(error);
        let tree = repository
            .find_object(commit)
            .and_then(|object| object.peel_to_commit())
            .and_then(|commit| commit.tree())
            .map_err(local)?;
        let mut recorder = gix::traverse::tree::Recorder::default();
        tree.traverse().breadthfirst(&mut recorder).map_err(local)?;
        recorder
            .records
            .into_iter()
            .filter(|entry| entry.mode.is_blob())
            .map(|entry| {
                let size = repository.find_header(entry.oid).map_err(local)?.size();
                let path = path_text(entry.filepath.as_ref());
                Ok(RemoteObject {
                    id: path.clone(),
                    path,
                    marker: entry.oid.to_hex().to_string(),
                    size: Some(size),
                    export: None,
                    groups: None,
                })
            })
            .collect()
    }

    /// A failure talking to the remote: transient when gix says retrying may help (a refused
    /// or dropped connection, a timeout, a server error).
    fn remote_error(&self, error: gix::Error) -> ConnectorError {
        let transient = error.can_retry_lenient();
        ConnectorError::transport(self.shown(), transient, error)
    }

    /// A failure of the local repository (a disk error, a damaged object).
    fn local_error(&self, error: gix::Error) -> ConnectorError {
        ConnectorError::io(
            format!("{} (kept in {})", self.shown(), self.path.display()),
            std::io::Error::other(error),
        )
    }
}

impl Connector for GitConnector {
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let repository = self.repository()?;
        let objects = match self.fetch_tip(&repository)? {
            Some(commit) => self.files(&repository, commit)?,
            None => Vec::new(),
        };
        Ok(Listed::complete(objects))
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        let shown = crate::mirror::shown_object(&self.url, &object.path);
        let id = gix::ObjectId::from_hex(object.marker.as_bytes()).map_err(|error| {
            ConnectorError::protocol(
                &shown,
                format!("{:?} is no blob id: {error}", object.marker),
            )
        })?;
        let repository = self.repository()?;
        let local = |error| ConnectorError::io(&shown, std::io::Error::other(error));
        let size = repository.find_header(id).map_err(local)?.size();
        if size > limit {
            return Err(ConnectorError::too_large(shown, limit, Some(size)));
        }
        let blob = repository.find_blob(id).map_err(local)?;
        into.write_all(&blob.data)
            .map_err(|error| ConnectorError::io(&shown, error))?;
        Ok(size)
    }
}

/// The names of the branches the remote advertised.
fn branches(advertised: &[Ref]) -> impl Iterator<Item = &BStr> {
    advertised
        .iter()
        .filter_map(|reference| reference.unpack().0.strip_prefix(BRANCH_PREFIX.as_bytes()))
        .map(|name| name.as_bstr())
}

fn missing_branch(branch: &str, advertised: &[Ref]) -> String {
    let mut names: Vec<String> = branches(advertised).map(|name| name.to_string()).collect();
    names.sort();
    if names.is_empty() {
        format!("branch {branch:?} not found; the remote has no branches")
    } else {
        format!(
            "branch {branch:?} not found; the remote has: {}",
            names.join(", ")
        )
    }
}

/// A tree path as text. Git stores names as bytes; one that is not UTF-8 keeps its readable
/// parts (the rest become U+FFFD), which is how the indexer would show it anyway.
fn path_text(path: &BStr) -> String {
    path.to_str_lossy().into_owned()
}

/// `repository` with `http.followRedirects = false`: a Git server that redirects is refused,
/// not followed to another host (Git itself follows only the first request's redirect; a
/// source is the URL the operator wrote).
fn without_redirects(mut repository: gix::Repository) -> Result<gix::Repository, gix::Error> {
    let mut config = repository.config_snapshot_mut();
    config
        .set_value(&gix::config::tree::Http::FOLLOW_REDIRECTS, "false")
        .map_err(gix::Error::from_error)?;
    config.commit().map_err(gix::Error::from_error)?;
    Ok(repository)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(name: &str) -> Ref {
        Ref::Direct {
            full_ref_name: name.into(),
            object: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
        }
    }

    #[test]
    fn a_missing_branch_names_the_branches_there_are() {
        let advertised = [
            direct("refs/heads/main"),
            direct("HEAD"),
            direct("refs/heads/docs"),
        ];
        assert_eq!(
            missing_branch("wiki", &advertised),
            "branch \"wiki\" not found; the remote has: docs, main"
        );
        assert_eq!(
            missing_branch("wiki", &[]),
            "branch \"wiki\" not found; the remote has no branches"
        );
    }

    #[test]
    fn the_default_branch_is_where_head_points_and_none_when_unborn() {
        let connector =
            GitConnector::new("file:///repo", None, std::path::Path::new("/tmp")).unwrap();
        let head = |object| Ref::Symbolic {
            full_ref_name: "HEAD".into(),
            target: "refs/heads/main".into(),
            tag: None,
            object,
        };
        let commit = gix::ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        assert_eq!(
            connector
                .tip(&[direct("refs/heads/main"), head(commit)])
                .unwrap(),
            Some(commit)
        );
        let unborn = Ref::Unborn {
            full_ref_name: "HEAD".into(),
            target: "refs/heads/main".into(),
        };
        assert_eq!(connector.tip(&[unborn]).unwrap(), None);
        assert!(matches!(
            connector.tip(&[direct("refs/heads/main")]),
            Err(ConnectorError::Protocol { .. })
        ));
    }

    #[test]
    fn a_named_branch_is_looked_up_among_the_branches() {
        let connector =
            GitConnector::new("file:///repo", Some("docs"), std::path::Path::new("/tmp")).unwrap();
        let error = connector
            .tip(&[direct("refs/heads/main")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("git+file:///repo#docs"), "{error}");
        assert!(
            error.contains("branch \"docs\" not found; the remote has: main"),
            "{error}"
        );
        assert!(connector
            .tip(&[direct("refs/heads/docs")])
            .unwrap()
            .is_some());
    }
}
