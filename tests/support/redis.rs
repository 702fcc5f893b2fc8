//! A real Redis for the tests: Debian's `redis-server` on 127.0.0.1, on a
//! port of its own, with a throwaway directory and no persistence (or an
//! append-only file, for a restart that keeps what was written); killed
//! and reaped when dropped, and restartable on the same port.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running (or stopped) Redis.
pub struct Redis {
    child: Option<Child>,
    dir: tempfile::TempDir,
    persistent: bool,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Redis {
    /// Start one on a free port.
    pub fn start() -> Self {
        Self::started(false)
    }

    /// Start one on a free port that writes what it holds to an
    /// append-only file (flushed every second, and on a graceful stop), so
    /// that [`Redis::restart_gracefully`] keeps it.
    pub fn start_persistent() -> Self {
        Self::started(true)
    }

    fn started(persistent: bool) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Self {
            child: None,
            dir: tempfile::tempdir().unwrap(),
            persistent,
            port,
        };
        redis.restart();
        redis
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stop it (the port stays its own to start again on).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stop it as an operator would (SIGTERM: it writes what it holds
    /// first), then start it again.
    pub fn restart_gracefully(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = libc::pid_t::try_from(child.id()).unwrap();
            // SAFETY: a plain signal to a child this value owns.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let _ = child.wait();
        }
        self.restart();
    }

    /// Start it (again), and wait until it takes connections.
    pub fn restart(&mut self) {
        self.stop();
        let appendonly = if self.persistent { "yes" } else { "no" };
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", appendonly, "--dir"])
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed (scripts/test installs it)");
        self.child = Some(child);
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
