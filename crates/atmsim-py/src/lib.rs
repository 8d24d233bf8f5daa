//! The thin pyo3 layer of atmsim: JSON scenario in, JSON summary and
//! columnar series out. No logic lives here; see `docs/core-interface.md`.

use atmsim_core::stats::series::METRIC_NAMES;
use atmsim_core::{Scenario, Simulation as CoreSimulation};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A network built from the core JSON, advanced in slices from Python.
#[pyclass(module = "atmsim._core")]
struct Simulation {
    inner: Option<CoreSimulation>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(core_json: &str) -> PyResult<Self> {
        let sc = Scenario::from_json(core_json)
            .map_err(|e| PyValueError::new_err(format!("core scenario: {e}")))?;
        let sim = CoreSimulation::new(&sc)
            .map_err(|e| PyValueError::new_err(format!("core scenario: {e}")))?;
        Ok(Simulation { inner: Some(sim) })
    }

    /// Runs every event with time <= until_ps, without holding the GIL.
    fn advance(&mut self, py: Python<'_>, until_ps: u64) -> PyResult<()> {
        let sim = self.sim_mut()?;
        py.detach(|| sim.advance(until_ps));
        Ok(())
    }

    /// Simulated time reached, ps.
    #[getter]
    fn now_ps(&self) -> PyResult<u64> {
        Ok(self.sim()?.now())
    }

    /// Duration of the scenario, ps.
    #[getter]
    fn duration_ps(&self) -> PyResult<u64> {
        Ok(self.sim()?.duration())
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> PyResult<u64> {
        Ok(self.sim()?.events())
    }

    /// Closes the run: returns (summary JSON, series dict). The simulation
    /// cannot be advanced afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyDict>)> {
        let mut sim = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        let (summary, series) = py.detach(|| sim.finish());
        let json =
            serde_json::to_string(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let d = PyDict::new(py);
        d.set_item("time_s", PyBytes::new(py, &le_bytes_f64(&series.time_s)))?;
        let entity: Vec<u8> = series.entity.iter().flat_map(|x| x.to_le_bytes()).collect();
        d.set_item("entity", PyBytes::new(py, &entity))?;
        d.set_item("metric", PyBytes::new(py, &series.metric))?;
        d.set_item("value", PyBytes::new(py, &le_bytes_f64(&series.value)))?;
        d.set_item("entity_names", series.entity_names)?;
        d.set_item("metric_names", METRIC_NAMES.to_vec())?;
        Ok((json, d))
    }
}

impl Simulation {
    fn sim(&self) -> PyResult<&CoreSimulation> {
        self.inner
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))
    }

    fn sim_mut(&mut self) -> PyResult<&mut CoreSimulation> {
        self.inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))
    }
}

fn le_bytes_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Version of the core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
