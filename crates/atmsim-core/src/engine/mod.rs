//! The engine: simulated time, the event queue and random-number streams.
//!
//! It knows nothing of cells or networks; [`crate::sim`] gives events their
//! meaning.

pub mod queue;
pub mod rng;
pub mod time;
pub mod wheel;

pub use queue::{Event, EventQueue, SourceKeys};
pub use rng::RngStream;
pub use time::{Time, PS_PER_S};
pub use wheel::{TieKey, TimingWheel};
