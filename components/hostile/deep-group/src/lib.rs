//! A hostile discovery component for the host's tests: it returns a chain of 100,000 Groups, each the parent of the next.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    Ok(chain(ObjectType::Group, 100_000))
}

component!(discover);
