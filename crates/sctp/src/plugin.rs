//! Algorithms supplied by the code that embeds the engine (experiments, tests): a named
//! factory that the registries ([`crate::CongestionConfig`], [`crate::cmt::SchedulerConfig`],
//! [`crate::cmt::RetransmitConfig`]) accept beside their built-in variants.

use std::fmt;
use std::sync::Arc;

/// A named factory of boxed `T` (a trait object such as `dyn Controller`). Two plugins are
/// equal when they share the name and the factory (clones of one plugin).
pub struct Plugin<T: ?Sized> {
    name: &'static str,
    build: Arc<dyn Fn() -> Box<T> + Send + Sync>,
}

impl<T: ?Sized> Plugin<T> {
    /// A plugin called `name` whose instances `build` makes (one per destination for a
    /// congestion controller, one per association for the path algorithms).
    pub fn new(name: &'static str, build: impl Fn() -> Box<T> + Send + Sync + 'static) -> Self {
        Plugin { name, build: Arc::new(build) }
    }
    /// The name it was given.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// A new instance.
    pub fn build(&self) -> Box<T> {
        (self.build)()
    }
}

impl<T: ?Sized> Clone for Plugin<T> {
    fn clone(&self) -> Self {
        Plugin { name: self.name, build: Arc::clone(&self.build) }
    }
}

impl<T: ?Sized> fmt::Debug for Plugin<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Plugin").field(&self.name).finish()
    }
}

impl<T: ?Sized> PartialEq for Plugin<T> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && std::ptr::addr_eq(Arc::as_ptr(&self.build), Arc::as_ptr(&other.build))
    }
}
