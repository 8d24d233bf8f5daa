//! The thin pyo3 layer of atmsim: JSON scenario in, JSON summary and
//! columnar series out. No logic lives here; see `docs/core-interface.md`.
//!
//! Errors: a scenario the core rejects (unreadable JSON, a value out of
//! range) raises `ValueError` with a one-line message. A panic in the core
//! is a bug: every call into the core runs under `catch_unwind`, and a panic
//! raises `RuntimeError("internal error: <message> at <file:line:col>")`,
//! one line, without the default hook's report on stderr. The simulation is
//! then poisoned (its state may be inconsistent): every later call on it
//! raises the same kind of error. Release builds must unwind on panic (the
//! workspace's release profile says so).

#![deny(unsafe_code)]

use atmsim_core::stats::series::METRIC_NAMES;
use atmsim_core::{Scenario, Simulation as CoreSimulation};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// True while this thread runs a call into the core under [`guarded`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The message and location of the last panic caught under [`guarded`].
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once, a panic hook that keeps quiet about panics inside
/// [`guarded`] (recording their message and location instead) and leaves
/// every other panic to the hook that was there before.
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let mut text = payload_text(info.payload());
                if let Some(at) = info.location() {
                    text = format!("{text} at {}:{}:{}", at.file(), at.line(), at.column());
                }
                CAUGHT.with(|c| *c.borrow_mut() = Some(text));
            } else {
                previous(info);
            }
        }));
    });
}

/// The message a panic carried (`panic!` gives a `&str` or a `String`).
fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// `text` on one line: its lines, trimmed, joined by " / ".
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Runs `f`, a call into the core; a panic in it becomes `Err` with the
/// panic's message and location on one line.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_quiet_hook();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    result.map_err(|payload| {
        let text = CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| payload_text(payload.as_ref()));
        one_line(&text)
    })
}

/// The Python error for a panic with message `text`.
fn internal_error(text: &str) -> PyErr {
    PyRuntimeError::new_err(format!("internal error: {text}"))
}

/// A network built from the core JSON, advanced in slices from Python.
#[pyclass(module = "atmsim._core")]
struct Simulation {
    inner: Option<CoreSimulation>,
    /// The message of the panic that poisoned this simulation, if any.
    poisoned: Option<String>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(core_json: &str) -> PyResult<Self> {
        let built =
            guarded(|| Scenario::from_json(core_json).and_then(|sc| CoreSimulation::new(&sc)))
                .map_err(|text| internal_error(&text))?;
        let sim =
            built.map_err(|e| PyValueError::new_err(one_line(&format!("core scenario: {e}"))))?;
        Ok(Simulation {
            inner: Some(sim),
            poisoned: None,
        })
    }

    /// Runs every event with time <= until_ps, without holding the GIL; with
    /// `max_events`, returns after about that many events. True when
    /// until_ps (or the run's end) is reached, false when a call must go on.
    #[pyo3(signature = (until_ps, max_events=None))]
    fn advance(
        &mut self,
        py: Python<'_>,
        until_ps: u64,
        max_events: Option<u64>,
    ) -> PyResult<bool> {
        let sim = self.sim_mut()?;
        let budget = max_events.unwrap_or(u64::MAX).max(1);
        let outcome = py.detach(|| guarded(|| sim.advance_some(until_ps, budget)));
        self.poison_on(outcome)
    }

    /// Simulated time reached, ps.
    #[getter]
    fn now_ps(&mut self) -> PyResult<u64> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.now());
        self.poison_on(outcome)
    }

    /// Duration of the scenario, ps.
    #[getter]
    fn duration_ps(&mut self) -> PyResult<u64> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.duration());
        self.poison_on(outcome)
    }

    /// Events processed so far.
    #[getter]
    fn events(&mut self) -> PyResult<u64> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.events());
        self.poison_on(outcome)
    }

    /// Closes the run: returns (summary JSON, series dict). The simulation
    /// cannot be advanced afterwards. The dict's "captures" maps each
    /// packet capture's file name to its pcap bytes.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyDict>)> {
        self.sim_mut()?;
        let mut sim = self.inner.take().expect("checked by sim_mut");
        let outcome = py.detach(|| {
            guarded(|| {
                let (summary, series) = sim.finish();
                let captures = sim.take_capture_files();
                serde_json::to_string(&summary).map(|json| (json, (series, captures)))
            })
        });
        let (json, (series, captures)) = self
            .poison_on(outcome)?
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let d = PyDict::new(py);
        let files = PyDict::new(py);
        for (name, bytes) in captures {
            files.set_item(name, PyBytes::new(py, &bytes))?;
        }
        d.set_item("captures", files)?;
        d.set_item("time_s", PyBytes::new(py, &le_bytes_f64(&series.time_s)))?;
        let entity: Vec<u8> = series.entity.iter().flat_map(|x| x.to_le_bytes()).collect();
        d.set_item("entity", PyBytes::new(py, &entity))?;
        d.set_item("metric", PyBytes::new(py, &series.metric))?;
        d.set_item("value", PyBytes::new(py, &le_bytes_f64(&series.value)))?;
        d.set_item("entity_names", series.entity_names)?;
        d.set_item("metric_names", METRIC_NAMES.to_vec())?;
        Ok((json, d))
    }

    /// Makes flow `flow`'s two ends real hosts, for an emulation
    /// (docs/emulation.md): its model sender never starts. Before the
    /// first `advance`, on a run without the fast paths; `ValueError`
    /// otherwise.
    fn set_external(&mut self, flow: usize) -> PyResult<()> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.set_external(flow));
        self.poison_on(outcome)?.map_err(PyValueError::new_err)
    }

    /// The real hosts of flow `flow` negotiated window scale `scale` for
    /// the receiver's windows and segments of `mss` bytes: the explicit-rate
    /// control reads and writes their ACKs' windows with these.
    fn set_external_tcp(&mut self, flow: usize, scale: u8, mss: u32) -> PyResult<()> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.set_external_tcp(flow, scale, mss));
        self.poison_on(outcome)?.map_err(PyValueError::new_err)
    }

    /// A real host of flow `flow` writes an IP datagram of `ip_bytes`
    /// bytes now (`now_ps`): towards the flow's receiver (`to_receiver`) or
    /// its sender; `tag` comes back with it from `take_delivered`; `wnd`:
    /// the window field of a TCP segment towards the sender, which the
    /// explicit-rate control may lower (0 for any other datagram); `ack`:
    /// such a segment's acknowledgement as bytes acknowledged since the
    /// connection began, which an ack bucket paces by (0: unknown).
    #[pyo3(signature = (flow, to_receiver, ip_bytes, tag, wnd=0, ack=0))]
    fn inject(
        &mut self,
        flow: usize,
        to_receiver: bool,
        ip_bytes: u32,
        tag: u64,
        wnd: u16,
        ack: u64,
    ) -> PyResult<()> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| sim.inject(flow, to_receiver, ip_bytes, wnd, ack, tag));
        self.poison_on(outcome)?.map_err(PyValueError::new_err)
    }

    /// The real hosts' datagrams delivered since the last call, in the
    /// order they arrived: (tag, arrival time in ps, to_receiver, window
    /// field: as injected, or lowered on the way).
    fn take_delivered(&mut self) -> PyResult<Vec<(u64, u64, bool, u16)>> {
        let sim = self.sim_mut()?;
        let outcome = guarded(|| {
            (sim.take_delivered().into_iter())
                .map(|d| (d.tag, d.at, d.to_receiver, d.wnd))
                .collect()
        });
        self.poison_on(outcome)
    }

    /// Panics inside a guarded call on this simulation, which poisons it:
    /// for the tests of the error path only (no valid input panics).
    #[doc(hidden)]
    fn _panic_for_test(&mut self) -> PyResult<()> {
        self.sim_mut()?;
        let outcome = guarded(|| panic!("a deliberate panic for the tests"));
        self.poison_on(outcome)
    }
}

impl Simulation {
    /// The simulation, unless it was poisoned or finished.
    fn sim_mut(&mut self) -> PyResult<&mut CoreSimulation> {
        if let Some(text) = &self.poisoned {
            return Err(internal_error(&format!(
                "the simulation is unusable after an earlier internal error ({text})"
            )));
        }
        self.inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))
    }

    /// The value of a guarded call, or the internal error of its panic,
    /// which poisons the simulation.
    fn poison_on<T>(&mut self, outcome: Result<T, String>) -> PyResult<T> {
        outcome.map_err(|text| {
            let err = internal_error(&text);
            self.poisoned = Some(text);
            err
        })
    }
}

fn le_bytes_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The bytes of a Parquet file of a series' columns, as `finish` returns
/// them (little-endian f64 times and values, u32 entity indices, u8 metric
/// codes, and the names they index); see `atmsim_core::stats::parquet`.
/// Inconsistent columns raise `ValueError`.
#[pyfunction]
#[pyo3(signature = (time_s, entity, entity_names, metric, metric_names, value, created_by))]
#[allow(clippy::too_many_arguments)]
fn series_parquet<'py>(
    py: Python<'py>,
    time_s: &[u8],
    entity: &[u8],
    entity_names: Vec<String>,
    metric: &[u8],
    metric_names: Vec<String>,
    value: &[u8],
    created_by: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let floats = |b: &[u8]| -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    };
    let entity: Vec<u32> = entity
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let metric: Vec<u32> = metric.iter().map(|&m| m as u32).collect();
    let entity_names: Vec<&str> = entity_names.iter().map(String::as_str).collect();
    let metric_names: Vec<&str> = metric_names.iter().map(String::as_str).collect();
    let file = atmsim_core::stats::parquet::series_parquet(
        &floats(time_s),
        &entity,
        &entity_names,
        &metric,
        &metric_names,
        &floats(value),
        created_by,
    )
    .map_err(PyValueError::new_err)?;
    Ok(PyBytes::new(py, &file))
}

/// The bytes of a Parquet file of a table of nullable columns (see
/// `atmsim_core::stats::parquet::table_parquet`): `columns` holds (name,
/// kind, values), kind "bool", "int", "float" or "str" and values a list
/// of such values or None. `metadata` goes into the file's key-value
/// metadata. A value not of its column's kind, or columns of different
/// lengths, raise `ValueError`.
#[pyfunction]
#[pyo3(signature = (columns, metadata, created_by))]
fn table_parquet<'py>(
    py: Python<'py>,
    columns: Vec<(String, String, Bound<'py, PyAny>)>,
    metadata: Vec<(String, String)>,
    created_by: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    use atmsim_core::stats::parquet::Values;
    let mut table = Vec::with_capacity(columns.len());
    for (name, kind, values) in columns {
        let bad = |e: PyErr| PyValueError::new_err(format!("table column {name}: {e}"));
        let values = match kind.as_str() {
            "bool" => Values::Bool(values.extract().map_err(bad)?),
            "int" => Values::Int(values.extract().map_err(bad)?),
            "float" => Values::Float(values.extract().map_err(bad)?),
            "str" => Values::Str(values.extract().map_err(bad)?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "table column {name}: kind {other:?}; expected bool, int, float or str"
                )))
            }
        };
        table.push((name, values));
    }
    let file = py
        .detach(|| atmsim_core::stats::parquet::table_parquet(&table, &metadata, created_by))
        .map_err(PyValueError::new_err)?;
    Ok(PyBytes::new(py, &file))
}

/// The TCP checksum after one 16-bit header word changes from `old` to
/// `new`, by the core's incremental update (RFC 1624, eqn. 3), which routers
/// and ATM edges use when they rewrite an ACK's window. Exposed so that the
/// truth suite can compare it with a full recomputation (RFC 1071) written
/// independently in Python.
#[pyfunction]
fn checksum_update(checksum: u16, old: u16, new: u16) -> u16 {
    atmsim_core::ip::checksum::update(checksum, old, new)
}

/// Version of the core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Panics inside a guarded call: for the tests of the error path only (no
/// valid input panics). The message has two lines, to show it comes out as
/// one.
#[doc(hidden)]
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    guarded(|| panic!("a deliberate panic\nfor the tests")).map_err(|text| internal_error(&text))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(series_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(table_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(checksum_update, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
