//! A real OCI registry for the tests: the CNCF distribution registry
//! (Debian's `docker-registry`) on 127.0.0.1, on a port of its own, with a
//! throwaway storage directory and config; killed and reaped when dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A running registry.
pub struct Registry {
    child: Child,
    dir: tempfile::TempDir,
    /// `127.0.0.1:PORT`.
    pub host_port: String,
}

impl Registry {
    /// Start one, anonymous.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: info}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\n  delete: {{enabled: true}}\nhttp:\n  addr: 127.0.0.1:0\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let mut child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("docker-registry is installed (scripts/test installs it)");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let host_port = loop {
            let line = lines
                .next()
                .expect("the registry says where it listens")
                .unwrap();
            if let Some(at) = line.find("listening on ") {
                let rest = &line[at + "listening on ".len()..];
                break rest
                    .split(|c: char| c == '"' || c.is_whitespace())
                    .next()
                    .unwrap()
                    .to_owned();
            }
        };
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            dir,
            host_port,
        }
    }

    /// `oci://127.0.0.1:PORT/REPO`.
    pub fn reference(&self, repo: &str) -> String {
        format!("oci://{}/{repo}", self.host_port)
    }

    /// Where the registry keeps the blob `digest` (`sha256:…`).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
