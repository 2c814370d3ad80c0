//! A case's `listing.txt`: the order the disk listed each folder of the run the real agent
//! ran on (`tests/oracle/listing.py` writes it when a case is recorded). Agents that take a
//! folder as listed (Claude Code's and Kilo's rules, opencode's glob reversed, Cline's
//! same-titled files) are compared with what they sent on that disk: each runner lays the
//! case out in that order, in memory and, where the file system lets it, on disk.

use std::path::{Path, PathBuf};

use ctxgraph_db::profile::Layout;
use ctxgraph_db::system::{ListingOrder, MemorySystem};

/// One case's recorded listings: each folder (relative to the case: `proj/.kilo/rules`) with
/// its entries in the order the disk listed them.
#[derive(Debug, Default)]
pub struct Listing {
    dirs: Vec<(String, Vec<String>)>,
}

impl Listing {
    /// The listings of the case in `case_dir` (none when it has no `listing.txt`).
    pub fn of(case_dir: &Path) -> Listing {
        let Ok(text) = std::fs::read_to_string(case_dir.join("listing.txt")) else {
            return Listing::default();
        };
        let dirs = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\t').map(str::to_owned);
                Some((fields.next()?, fields.collect()))
            })
            .collect();
        Listing { dirs }
    }

    /// Lists `fs` as recorded: each recorded folder (placed in the run by `place`) in its
    /// order, every other folder by a hash of the names (neither sorted nor reverse-sorted,
    /// so a query that assumes a sorted listing is caught).
    pub fn in_memory(&self, fs: &MemorySystem, place: &dyn Fn(&str) -> PathBuf) {
        fs.set_listing_order(ListingOrder::Hashed);
        for (dir, names) in &self.dirs {
            fs.set_listing(place(dir), names);
        }
    }

    /// Re-links each recorded folder's entries (placed in the run by `place`) until the disk
    /// lists them as recorded: on tmpfs, which lists newest first (or, on newer kernels,
    /// oldest first), moving them back in one order or the other does it. False when a
    /// folder still lists otherwise (ext4 lists by a hash seeded per file system): the
    /// runner then compares each run of blocks ordered by the listing as a set.
    pub fn on_disk(&self, place: &dyn Fn(&str) -> PathBuf) -> bool {
        self.dirs.iter().all(|(dir, names)| relist(&place(dir), names))
    }
}

/// The names of `dir` among `names`, in the order the disk lists them.
fn listed(dir: &Path, names: &[String]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| names.contains(name))
        .collect()
}

fn relist(dir: &Path, names: &[String]) -> bool {
    if listed(dir, names) == names {
        return true;
    }
    let hold = dir.join(".ctxgraph-relist");
    for newest_first in [true, false] {
        std::fs::create_dir(&hold).expect("a folder to hold the entries");
        for name in names {
            std::fs::rename(dir.join(name), hold.join(name)).expect("move an entry out");
        }
        let back: Vec<&String> =
            if newest_first { names.iter().rev().collect() } else { names.iter().collect() };
        for name in back {
            std::fs::rename(hold.join(name), dir.join(name)).expect("move an entry back");
        }
        std::fs::remove_dir(&hold).expect("the holding folder is empty");
        if listed(dir, names) == names {
            return true;
        }
    }
    false
}

/// `expected` (the agent's text, the run directory written out) and ctxgraph's `layout`,
/// each with every run of blocks that one directory's listing orders put in one order: for a
/// disk that lists the folders otherwise than the one the agent ran on. `None` when a run's
/// place in `expected` does not hold the same blocks in some order.
pub fn as_sets(layout: &Layout, expected: &str) -> Option<(String, String)> {
    let (ours, _) = layout.sets_in_one_order();
    let mut theirs = String::with_capacity(expected.len());
    let mut at = 0;
    let blocks = &layout.blocks;
    let mut i = 0;
    while i < blocks.len() {
        let Some(listed) = &blocks[i].listed else {
            i += 1;
            continue;
        };
        let run: Vec<_> = blocks[i..]
            .iter()
            .take_while(|b| b.listed.as_ref().is_some_and(|l| l.dir == listed.dir))
            .collect();
        let (start, end) = (run[0].range.start, run[run.len() - 1].range.end);
        let gaps: Vec<&str> =
            run.windows(2).map(|w| &layout.text[w[0].range.end..w[1].range.start]).collect();
        let span = expected.get(start..end)?;
        // The span must be the run's texts in some order, joined by the same gaps.
        let mut left: Vec<&str> = run.iter().map(|b| layout.text_of(b)).collect();
        let mut rest = span;
        for k in 0..run.len() {
            let found = left.iter().position(|t| rest.starts_with(t))?;
            rest = &rest[left.swap_remove(found).len()..];
            if let Some(gap) = gaps.get(k) {
                rest = rest.strip_prefix(gap)?;
            }
        }
        if !rest.is_empty() {
            return None;
        }
        theirs.push_str(expected.get(at..start)?);
        theirs.push_str(&ours[start..end]);
        at = end;
        i += run.len();
    }
    theirs.push_str(expected.get(at..)?);
    Some((theirs, ours))
}
