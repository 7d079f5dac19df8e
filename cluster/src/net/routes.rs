//! Where to reach each node: the address in the membership, unless overridden (a test
//! routing a node pair through a proxy, a node behind a different local address).

use std::collections::BTreeMap;

use parking_lot::RwLock;

#[derive(Default)]
pub(crate) struct Routes {
    overrides: RwLock<BTreeMap<u64, String>>,
}

impl Routes {
    pub(crate) fn new(overrides: BTreeMap<u64, String>) -> Routes {
        Routes {
            overrides: RwLock::new(overrides),
        }
    }

    /// The address to dial for node `id`, whose membership address is `addr`.
    pub(crate) fn resolve(&self, id: u64, addr: &str) -> String {
        self.overrides
            .read()
            .get(&id)
            .cloned()
            .unwrap_or_else(|| addr.to_string())
    }

    pub(crate) fn set(&self, id: u64, addr: Option<String>) {
        let mut o = self.overrides.write();
        match addr {
            Some(a) => {
                o.insert(id, a);
            }
            None => {
                o.remove(&id);
            }
        }
    }
}
