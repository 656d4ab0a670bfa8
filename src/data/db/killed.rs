//! A run whose process died is marked `killed`: in the store always, and in
//! its JSON document only when that is a file this user's oscycles wrote for
//! this very run. The `source` of a row is data (anyone who could write the
//! store chose it), so the file is trusted only when it is, by its
//! descriptor: reached without following another user's link
//! ([`crate::base::fsafe`]), in a directory of this user that no one else can
//! write, a regular file of this user with one name that no one else can
//! write, and a run document of the same id, still `running`, written by
//! the same process (pid, boot and start time). It is never opened
//! blocking (a FIFO) and read under the document bound; the new content
//! is written beside it and renamed over it.

use crate::base::fsafe::{OutDir, euid};
use crate::data::results::{RunDoc, RunStatus};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The document of `stored` at `source`, when it is one this user's
/// oscycles wrote for the run (the module's rules); its directory and name.
pub(super) fn own_document(source: &str, stored: &RunDoc) -> Option<(OutDir, String, RunDoc)> {
    let path = Path::new(source);
    if !path.is_absolute() {
        return None;
    }
    let name = path.file_name()?.to_str()?.to_string();
    let dir = OutDir::open(path.parent()?, false).ok()?;
    let me = euid();
    let dm = dir.metadata().ok()?;
    if dm.uid() != me || dm.mode() & 0o022 != 0 {
        return None;
    }
    let f = dir.open_file(&name).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.uid() != me || m.nlink() != 1 || m.mode() & 0o022 != 0 {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(crate::data::documents::MAX_DOC_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > crate::data::documents::MAX_DOC_BYTES {
        return None;
    }
    let doc = crate::data::documents::parse_text(path, String::from_utf8(bytes).ok()?).ok()?;
    let same = doc.id == stored.id && doc.owner.is_some() && doc.owner == stored.owner && doc.status == RunStatus::Running;
    same.then_some((dir, name, doc))
}
