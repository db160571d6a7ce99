//! Algorithms supplied by the code that embeds the engine (experiments, tests): a named
//! factory that the registries ([`crate::CongestionConfig`], [`crate::cmt::SchedulerConfig`],
//! [`crate::cmt::RetransmitConfig`]) accept beside their built-in variants.

use std::fmt;
use std::sync::Arc;

/// A named factory of boxed `T` (a trait object such as `dyn Controller`). Clones share the
/// factory; two plugins are equal when they are clones of one another. One pointer wide, so
/// a registry enum with a plugin variant stays small.
pub struct Plugin<T: ?Sized>(Arc<Factory<T>>);

struct Factory<T: ?Sized> {
    name: &'static str,
    build: Box<dyn Fn() -> Box<T> + Send + Sync>,
}

impl<T: ?Sized> Plugin<T> {
    /// A plugin called `name` whose instances `build` makes (one per destination for a
    /// congestion controller, one per association for the path algorithms).
    pub fn new(name: &'static str, build: impl Fn() -> Box<T> + Send + Sync + 'static) -> Self {
        Plugin(Arc::new(Factory { name, build: Box::new(build) }))
    }
    /// The name it was given.
    pub fn name(&self) -> &'static str {
        self.0.name
    }
    /// A new instance.
    pub fn build(&self) -> Box<T> {
        (self.0.build)()
    }
}

impl<T: ?Sized> Clone for Plugin<T> {
    fn clone(&self) -> Self {
        Plugin(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> fmt::Debug for Plugin<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Plugin").field(&self.0.name).finish()
    }
}

impl<T: ?Sized> PartialEq for Plugin<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
