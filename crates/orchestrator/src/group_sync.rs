//! Group commit for `records.jsonl`: every record reaches the operating system as it is
//! written (a `kill -9` of tauguard loses nothing), while `fsync` — which costs a disk flush
//! and, one record at a time under the writer's lock, dominated runs on real disks — runs at
//! most every [`SYNC_EVERY`] or [`SYNC_RECORDS`] records, on a thread of its own (never on the
//! async runtime's), and once more when the writer closes.
//!
//! Durability: a crash of the process loses nothing; a crash of the machine or a power loss
//! loses at most the records of the last 100 ms (or 256 records), which a resumed run redoes.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a written record waits for its `fsync`.
pub(crate) const SYNC_EVERY: Duration = Duration::from_millis(100);
/// Records written between two `fsync`s at most.
pub(crate) const SYNC_RECORDS: u32 = 256;

enum Signal {
    Now,
    Close,
}

/// The syncing thread of one records file.
#[derive(Debug)]
pub(crate) struct GroupSync {
    tx: Sender<Signal>,
    dirty: Arc<AtomicBool>,
    failure: Arc<Mutex<Option<std::io::Error>>>,
    thread: Option<JoinHandle<()>>,
    since_sync: u32,
}

impl GroupSync {
    /// Starts syncing `file` (a handle to the records file) in the background.
    pub(crate) fn start(file: File) -> GroupSync {
        let (tx, rx) = channel();
        let dirty = Arc::new(AtomicBool::new(false));
        let failure = Arc::new(Mutex::new(None));
        let thread = {
            let (dirty, failure) = (dirty.clone(), failure.clone());
            std::thread::Builder::new()
                .name("tauguard-records-sync".into())
                .spawn(move || sync_loop(&file, &rx, &dirty, &failure))
                .expect("the records sync thread starts")
        };
        GroupSync {
            tx,
            dirty,
            failure,
            thread: Some(thread),
            since_sync: 0,
        }
    }

    /// Notes one record written to the OS; asks for an early sync every [`SYNC_RECORDS`].
    pub(crate) fn written(&mut self) {
        self.dirty.store(true, Ordering::SeqCst);
        self.since_sync += 1;
        if self.since_sync >= SYNC_RECORDS {
            self.since_sync = 0;
            let _ = self.tx.send(Signal::Now);
        }
    }

    /// The error of a background `fsync`, if one failed (reported once).
    pub(crate) fn take_failure(&self) -> Option<std::io::Error> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Syncs what is left and stops the thread.
    pub(crate) fn close(&mut self) -> Option<std::io::Error> {
        if let Some(t) = self.thread.take() {
            let _ = self.tx.send(Signal::Close);
            let _ = t.join();
        }
        self.take_failure()
    }
}

impl Drop for GroupSync {
    fn drop(&mut self) {
        self.close();
    }
}

fn sync_loop(
    file: &File,
    rx: &Receiver<Signal>,
    dirty: &AtomicBool,
    failure: &Mutex<Option<std::io::Error>>,
) {
    let sync = || {
        if dirty.swap(false, Ordering::SeqCst)
            && let Err(e) = file.sync_data()
        {
            *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
        }
    };
    loop {
        match rx.recv_timeout(SYNC_EVERY) {
            Ok(Signal::Now) | Err(RecvTimeoutError::Timeout) => sync(),
            Ok(Signal::Close) | Err(RecvTimeoutError::Disconnected) => {
                sync();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn writes_reach_the_os_at_once_and_close_syncs_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        let mut sync = GroupSync::start(file.try_clone().unwrap());
        for i in 0..(SYNC_RECORDS + 3) {
            writeln!(file, "{i}").unwrap();
            sync.written();
            // Another reader sees every line as soon as it is written: no buffering in us.
            let seen = std::fs::read_to_string(&path).unwrap().lines().count();
            assert_eq!(seen as u32, i + 1);
        }
        assert!(sync.close().is_none());
        assert!(
            !sync.dirty.load(Ordering::SeqCst),
            "the last records were synced"
        );
        // Closing twice is harmless.
        assert!(sync.close().is_none());
    }
}
