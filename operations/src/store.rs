//! Operations on disk: `$TABWIRE_STATE_DIR/operations.json`, so that a bridge that is
//! restarted can pick up what its predecessor was following.
//!
//! Several `tabwire mcp` sessions may run at once and share the file. Each write therefore
//! takes an exclusive `flock` on `operations.lock`, reads the file, merges its own changed
//! operations in by id (the more advanced record wins), prunes, and replaces the file
//! atomically (temp file + rename). Readers never see half a file; writers never lose each
//! other's operations. (Windows has no flock here: there the last writer's merge wins.)
//!
//! Writes happen off the async runtime, on the [`Writer`]'s own low-priority thread, after the
//! milestone has gone to the client: the disk never delays a notification.
//!
//! The disk may fail the store: full, read-only, or a file that is not ours any more. Then the
//! operations go on in memory, and [`Health`] says what went wrong and where, for the tool
//! results to tell the user (a log line alone reaches nobody). A write that failed is kept and
//! tried again with the next one, so nothing is lost once the disk has room again; an unreadable
//! file is moved aside, never overwritten.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tabwire_proto::runtime_dir::now_ms;
use tokio::sync::{mpsc, oneshot};

use super::record::Operation;
use tabwire_proto::dirs::{Lock, create_private_dir, keep_private, write_private};

/// Finished operations kept at most…
pub const KEEP_FINISHED: usize = 1_000;
/// …and for at most this long.
pub const KEEP_FOR_MS: u64 = 7 * 24 * 3600 * 1000;

const FILE: &str = "operations.json";
const LOCK: &str = "operations.lock";
const FORMAT: u32 = 1;

#[derive(Serialize)]
struct Contents<'a> {
    format: u32,
    operations: &'a [Operation],
}

/// The file as read: each operation on its own, so that one unreadable record costs only itself.
#[derive(Deserialize)]
struct Loose {
    operations: Vec<serde_json::Value>,
}

/// The state directory (`tabwire_proto::dirs::state_dir`): where `operations.json` lives.
pub use tabwire_proto::dirs::state_dir as default_dir;

#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    /// What this store last wrote, and the file's stamp right after.
    last: Arc<Mutex<Option<Written>>>,
    health: Health,
}

/// What went wrong with the store, shared by every clone of it: the file set aside at start-up,
/// and the last write that failed (until one succeeds).
#[derive(Debug, Clone, Default)]
pub struct Health(Arc<Mutex<Notices>>);

#[derive(Debug, Default)]
struct Notices {
    set_aside: Option<String>,
    write_failed: Option<String>,
}

impl Health {
    /// What the user should know about the store, if anything: one sentence per problem, each
    /// naming the file and what to do.
    pub fn problem(&self) -> Option<String> {
        let n = self.0.lock().expect("store health poisoned");
        let parts: Vec<&str> =
            [&n.set_aside, &n.write_failed].into_iter().flatten().map(String::as_str).collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    fn notices(&self) -> std::sync::MutexGuard<'_, Notices> {
        self.0.lock().expect("store health poisoned")
    }
}

type Written = (Option<Stamp>, Vec<Operation>);

/// Tells one version of the file from another: every write is a new file (temp + rename).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = fs::metadata(path).ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&meta),
        })
    }
}

impl Store {
    pub fn at(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into(), last: Arc::default(), health: Health::default() }
    }

    /// What went wrong with this store so far (shared with its clones and its writer).
    pub fn health(&self) -> Health {
        self.health.clone()
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// Every stored operation, pruned. A file that cannot be read as operations is moved
    /// aside (`operations.json.corrupt-<ms>`) and the store starts with what could be read of it
    /// ([`Health`] says so).
    pub fn load(&self) -> io::Result<Vec<Operation>> {
        if !self.path().exists() {
            return Ok(Vec::new()); // nothing stored: create nothing until there is
        }
        let _lock = self.lock()?;
        let mut ops = self.read()?;
        prune(&mut ops, now_ms());
        Ok(ops)
    }

    /// Merge `changed` into the file by operation id, prune, and replace the file atomically.
    pub fn save(&self, changed: &[Operation]) -> io::Result<()> {
        let _lock = self.lock()?;
        // The file as this store last wrote it, unless another writer replaced it since: then
        // it is read again. Parsing the whole file at every milestone would cost more CPU
        // than anything else on the way of a milestone.
        let stamp = Stamp::of(&self.path());
        let cached = self.last.lock().expect("store cache poisoned").take();
        let mut ops = match cached {
            Some((at, ops)) if stamp.is_some() && at == stamp => ops,
            _ => self.read()?,
        };
        let mut index: HashMap<String, usize> =
            ops.iter().enumerate().map(|(i, op)| (op.operation_id.clone(), i)).collect();
        for op in changed {
            match index.get(&op.operation_id) {
                Some(&i) if !further(op, &ops[i]) => {}
                Some(&i) => ops[i] = op.clone(),
                None => {
                    index.insert(op.operation_id.clone(), ops.len());
                    ops.push(op.clone());
                }
            }
        }
        prune(&mut ops, now_ms());
        self.write(ops)
    }

    /// Replace the file with `ops`, whole for every reader; a power cut may lose the last
    /// milestones (or, rarely, leave a file that load() sets aside as corrupt).
    fn write(&self, ops: Vec<Operation>) -> io::Result<()> {
        let contents = Contents { format: FORMAT, operations: &ops };
        let text = serde_json::to_vec(&contents).map_err(io::Error::other)?;
        write_private(&self.path(), &text)?;
        if let Some(stamp) = Stamp::of(&self.path()) {
            *self.last.lock().expect("store cache poisoned") = Some((Some(stamp), ops));
        }
        Ok(())
    }

    /// The file's operations. A file that is not JSON of the right shape, or holds records that
    /// are not operations, is moved aside whole (nothing is deleted) and the readable records
    /// are written back; the user hears of it through [`Health`] and the log.
    fn read(&self) -> io::Result<Vec<Operation>> {
        let path = self.path();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let (ops, bad) = match serde_json::from_slice::<Loose>(&bytes) {
            Ok(loose) => {
                let total = loose.operations.len();
                let mut first = None;
                let ops: Vec<Operation> = loose
                    .operations
                    .into_iter()
                    .filter_map(|v| {
                        serde_json::from_value(v)
                            .map_err(|e| first.get_or_insert(e.to_string()).clone())
                            .ok()
                    })
                    .collect();
                match first {
                    None => return Ok(ops),
                    Some(e) => {
                        let n = total - ops.len();
                        let what = format!("{n} of its {total} operations are not readable ({e})");
                        (ops, what)
                    }
                }
            }
            Err(e) => (Vec::new(), format!("it is not readable ({e})")),
        };
        let aside = self.dir.join(format!("{FILE}.corrupt-{}", now_ms()));
        fs::rename(&path, &aside)?;
        if !ops.is_empty()
            && let Err(e) = self.write(ops.clone())
        {
            // They are followed in memory all the same, and saved with the next write.
            tracing::warn!(file = %path.display(), "cannot write the readable operations back: {e}");
        }
        let notice = format!(
            "The operations store {} was set aside: {bad}. It was moved to {} (kept for you to \
             look at) and tabwire goes on with the {} operation(s) it could read; the others \
             are no longer followed.",
            path.display(),
            aside.display(),
            ops.len()
        );
        tracing::warn!("{notice}");
        self.health.notices().set_aside = Some(notice);
        Ok(ops)
    }

    /// Create the directory (0700) and hold the lock file until the guard drops. The
    /// directory's mode and owner are checked on every open, not only when it is created: the
    /// operations hold what the user asked of chat sites and what they answered.
    fn lock(&self) -> io::Result<Lock> {
        create_private_dir(&self.dir)?;
        keep_private(&self.dir, 0o700)?;
        keep_private(&self.path(), 0o600)?;
        Lock::exclusive(&self.dir.join(LOCK))
    }

    /// A thread that saves what it is sent, coalescing bursts. Its own thread, at a lower CPU
    /// priority: on a busy machine the disk work waits for the milestones on their way, not
    /// the other way round.
    pub fn spawn_writer(self) -> Writer {
        let (tx, rx) = mpsc::unbounded_channel();
        let health = self.health();
        let spawned = std::thread::Builder::new()
            .name("tabwire-store".into())
            .spawn(move || write_loop(self, rx));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the operations writer ({e}); operations are not saved");
        }
        Writer { tx, health }
    }
}

/// Whether `a` is further along than `b` (then it replaces `b` in the file).
fn further(a: &Operation, b: &Operation) -> bool {
    let rank = |op: &Operation| {
        (op.status.is_final(), op.milestones.len(), op.chars, op.page_seq, op.updated_at)
    };
    rank(a) >= rank(b)
}

/// Keep every unfinished operation; of the finished ones, those of the last 7 days, and of
/// those the newest 1,000.
fn prune(ops: &mut Vec<Operation>, now: u64) {
    let cutoff = now.saturating_sub(KEEP_FOR_MS);
    ops.retain(|op| !op.status.is_final() || op.updated_at >= cutoff);
    let mut finished: Vec<(u64, usize)> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.status.is_final())
        .map(|(i, op)| (op.updated_at, i))
        .collect();
    if finished.len() <= KEEP_FINISHED {
        return;
    }
    finished.sort_unstable_by(|a, b| b.cmp(a));
    let dropped: HashSet<usize> = finished[KEEP_FINISHED..].iter().map(|&(_, i)| i).collect();
    let mut i = 0;
    ops.retain(|_| {
        i += 1;
        !dropped.contains(&(i - 1))
    });
}

enum Job {
    Save(Box<Operation>),
    Flush(oneshot::Sender<()>),
}

/// Sends operations to the writer task. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::UnboundedSender<Job>,
    health: Health,
}

impl Writer {
    /// Save this version of an operation (soon; a burst is written once).
    pub fn save(&self, op: &Operation) {
        let _ = self.tx.send(Job::Save(Box::new(op.clone())));
    }

    /// What the user should know about the store now (see [`Health::problem`]).
    pub fn problem(&self) -> Option<String> {
        self.health.problem()
    }

    /// Wait until everything sent before is on disk (or its write has failed).
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// Save what comes, a burst at a time. A batch whose write fails stays in `unsaved` and goes
/// with the next one: once the disk has room again, the file has every operation.
fn write_loop(store: Store, mut rx: mpsc::UnboundedReceiver<Job>) {
    tabwire_proto::dirs::lower_priority();
    let mut unsaved: HashMap<String, Operation> = HashMap::new();
    while let Some(first) = rx.blocking_recv() {
        let mut flushed = Vec::new();
        let mut job = Some(first);
        while let Some(j) = job.take().or_else(|| rx.try_recv().ok()) {
            match j {
                Job::Save(op) => {
                    unsaved.insert(op.operation_id.clone(), *op);
                }
                Job::Flush(done) => flushed.push(done),
            }
        }
        if !unsaved.is_empty() {
            let ops: Vec<Operation> = unsaved.values().cloned().collect();
            let result = store.save(&ops);
            let mut notices = store.health.notices();
            match result {
                Ok(()) => {
                    unsaved.clear();
                    if notices.write_failed.take().is_some() {
                        tracing::info!(file = %store.path().display(), "the operations are saved again");
                    }
                }
                Err(e) => {
                    let notice = format!(
                        "The operations store {} cannot be written ({e}): operations go on in \
                         memory and are saved once it can be, but a tabwire restarted before \
                         then will not know them. Free space there, or set TABWIRE_STATE_DIR to \
                         a writable directory.",
                        store.path().display()
                    );
                    if notices.write_failed.is_none() {
                        tracing::warn!("{notice}");
                    }
                    notices.write_failed = Some(notice);
                }
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::machine::{MilestoneKind, OperationStatus};

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tabwire-store-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn op(id: &str, now: u64) -> Operation {
        Operation::new(id.into(), 1, "p".into(), "a".into(), "hi", now, now + 60_000)
    }

    fn finished(id: &str, at: u64) -> Operation {
        let mut op = op(id, at);
        op.apply(MilestoneKind::Cancelled, at, json!({}), at).unwrap();
        op
    }

    #[cfg(unix)]
    #[test]
    fn loose_permissions_are_tightened_on_every_open() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch();
        let store = Store::at(&dir);
        store.save(&[op("a", now_ms())]).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&store.path()), 0o600, "written private");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o644)).unwrap();
        store.load().unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&store.path()), 0o600);
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn saves_and_loads() {
        let dir = scratch();
        let store = Store::at(&dir);
        let mut a = op("a", now_ms());
        store.save(std::slice::from_ref(&a)).unwrap();
        a.apply(MilestoneKind::MessageSent, now_ms(), json!({}), now_ms()).unwrap();
        store.save(std::slice::from_ref(&a)).unwrap();
        assert_eq!(store.load().unwrap(), vec![a]);
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn two_writers_merge_by_id_and_the_further_record_wins() {
        let dir = scratch();
        let (one, two) = (Store::at(&dir), Store::at(&dir));
        let now = now_ms();
        let mut a = op("a", now);
        one.save(&[a.clone(), op("b", now)]).unwrap();
        two.save(&[op("c", now)]).unwrap();
        a.apply(MilestoneKind::MessageSent, now, json!({}), now).unwrap();
        two.save(std::slice::from_ref(&a)).unwrap();
        // A stale copy of `a` (still pending) must not undo the other writer's progress.
        one.save(&[op("a", now)]).unwrap();
        let loaded = one.load().unwrap();
        let ids: Vec<_> = loaded.iter().map(|o| o.operation_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(loaded[0].status, OperationStatus::Sent);
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = scratch();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let store = Store::at(&dir);
                std::thread::spawn(move || {
                    for i in 0..25 {
                        store.save(&[op(&format!("t{t}-{i}"), now_ms())]).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(Store::at(&dir).load().unwrap().len(), 100);
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_corrupt_file_is_moved_aside() {
        let dir = scratch();
        fs::write(dir.join(FILE), b"{\"format\":1,\"operations\":[{\"trunc").unwrap();
        let store = Store::at(&dir);
        assert_eq!(store.load().unwrap(), vec![]);
        let aside: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("operations.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "moved aside once");
        assert!(!dir.join(FILE).exists());
        store.save(&[op("a", now_ms())]).unwrap();
        assert_eq!(store.load().unwrap().len(), 1, "the store works again");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn prunes_old_and_surplus_finished_operations_but_keeps_unfinished() {
        let now = now_ms();
        let mut ops =
            vec![op("running-old", now - KEEP_FOR_MS - 10), finished("old", now - KEEP_FOR_MS - 1)];
        for i in 0..(KEEP_FINISHED as u64 + 5) {
            ops.push(finished(&format!("f{i}"), now - 10_000 + i));
        }
        prune(&mut ops, now);
        assert!(ops.iter().any(|o| o.operation_id == "running-old"));
        assert!(!ops.iter().any(|o| o.operation_id == "old"));
        assert_eq!(ops.iter().filter(|o| o.status.is_final()).count(), KEEP_FINISHED);
        assert!(!ops.iter().any(|o| o.operation_id == "f0"), "the oldest finished go first");
        assert!(ops.iter().any(|o| o.operation_id == "f5"));
    }
}
