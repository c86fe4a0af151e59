//! TEMPORARY STUB — replaced by the demo server module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Era { #[default] Both, Legacy, Modern }
impl std::str::FromStr for Era {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s { "both" => Ok(Era::Both), "legacy" => Ok(Era::Legacy), "modern" => Ok(Era::Modern), o => Err(format!("unknown era {o}")) }
    }
}
pub async fn run_stdio(_era: Era) -> anyhow::Result<()> { Ok(()) }
