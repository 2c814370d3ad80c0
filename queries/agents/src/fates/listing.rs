//! CG022 for every agent: rule files whose order in the agent's layout comes from a
//! directory's listing (`Block::listed`), which another disk gives in another order.

use ctxgraph_db::lint::{Code, Finding, Location};
use ctxgraph_db::path;
use ctxgraph_db::profile::{Layout, ListedOrder};

/// What fixes it: one file, or names the agent sorts.
const HINT: &str = "keep these rules in one file, or (for an agent that sorts a folder by name) number the names (`01-style.md`, `02-tests.md`); for opencode's `instructions`, one entry per file in the order wanted";

/// One finding per directory whose listing orders two or more of `layout`'s blocks.
pub fn listing_findings(layout: &Layout) -> Vec<Finding> {
    let mut dirs: Vec<(&ctxgraph_db::profile::Listed, Vec<String>)> = Vec::new();
    for block in &layout.blocks {
        let (Some(listed), Some(file)) = (&block.listed, block.source.path()) else { continue };
        let name = path::display(file);
        match dirs.iter_mut().find(|(known, _)| known.dir == listed.dir) {
            Some((_, files)) => files.push(name),
            None => dirs.push((listed, vec![name])),
        }
    }
    dirs.into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(listed, files)| {
            let dir = path::display(&listed.dir);
            let how = match listed.order {
                ListedOrder::AsListed => "in the order the file system lists them",
                ListedOrder::Reversed => "in the reverse of the order the file system lists them",
                ListedOrder::Race => "in whatever order concurrent reads of sibling folders finish, which changes from run to run",
            };
            Finding {
                code: Code::ListingOrder,
                severity: Code::ListingOrder.severity(),
                message: format!(
                    "{} sends {} rule files of {dir} {how} ({}): another machine or CI can send them in another order",
                    layout.agent,
                    files.len(),
                    files.join(", ")
                ),
                location: Some(Location { uri: files[0].clone(), line: None, column: None }),
                hint: HINT.to_owned(),
            }
        })
        .collect()
}
