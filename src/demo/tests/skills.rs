//! The skills (the Skills extension): `skills/list`, `skills/get` and the files by `resources/read`.

use rmcp::model::{
    GetSkillRequestParams, ReadResourceRequestParams, ResourceContents, Skill, SkillResource,
    SkillResources,
};

use super::*;

const FLIGHT_REPORT: &str = "skill://flight-report/SKILL.md";

fn files(skill: &Skill) -> &[SkillResource] {
    match &skill.resources {
        SkillResources::Files(files) => files,
        other => panic!("{}: {other:?}", skill.uri),
    }
}

async fn read(client: &Client, uri: &str) -> Result<String, ServiceError> {
    let result = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    match &result.contents[..] {
        [ResourceContents::TextResourceContents { text, uri: at, .. }] if at == uri => {
            Ok(text.clone())
        }
        other => panic!("{uri}: one text content expected, got {other:?}"),
    }
}

#[tokio::test]
async fn skills_are_listed_and_their_files_read_back_as_the_digests_say() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let client = connect(era, &side, side.client()).await;
            let skills = client.list_all_skills().await.expect("skills/list");
            let names: Vec<&str> = skills.iter().map(Skill::name).collect();
            assert_eq!(
                names,
                ["flight-report", "trip-checklist"],
                "{side:?}/{era:?}"
            );
            let mut read_files = 0;
            for skill in &skills {
                let got = client
                    .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
                    .await
                    .expect("skills/get");
                assert_eq!(&got.skill, skill);
                for file in files(skill) {
                    let text = read(&client, &file.uri).await.unwrap();
                    file.verify(text.as_bytes()).expect("digest and size");
                    read_files += 1;
                }
                let skill_md = read(&client, &skill.uri).await.unwrap();
                let opening = format!("---\nname: {}\ndescription: ", skill.name());
                assert!(skill_md.starts_with(&opening), "{skill_md}");
                let description = &skill.frontmatter.description;
                assert!(skill_md.contains(description.as_str()), "{description}");
            }
            assert_eq!(read_files, 3);
            let report = files(&skills[0]);
            assert_eq!(report[1].uri, "skill://flight-report/templates/report.md");
        });
    }
}

#[tokio::test]
async fn unknown_skills_and_files_are_invalid_params() {
    for side in [LEGACY, MODERN] {
        let client = connect(Era::Both, &side, side.client()).await;
        for uri in [
            "skill://nope/SKILL.md",
            "skill://flight-report/templates/SKILL.md",
        ] {
            let error = client
                .get_skill(GetSkillRequestParams::new(uri))
                .await
                .unwrap_err();
            assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0, "{uri}");
        }
        // Not a SKILL.md at all: refused before the server's handler.
        let error = client
            .get_skill(GetSkillRequestParams::new("skill://flight-report/"))
            .await
            .unwrap_err();
        assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0);
        for uri in [
            "skill://flight-report/templates/missing.md",
            "skill://flight-report/../trip-checklist/SKILL.md",
            "skill://",
        ] {
            let error = read(&client, uri).await.unwrap_err();
            assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0, "{uri}");
        }
        // The clock's view is still there.
        let clock = client
            .read_resource(ReadResourceRequestParams::new("ui://demo/clock.html"))
            .await
            .unwrap();
        assert_eq!(clock.contents.len(), 1);
    }
}

/// The wire: `skills/list` as a 2026-07-28 client sees it.
#[tokio::test]
async fn skills_list_on_the_wire() {
    let mut raw = RawClient::start(Era::Modern);
    let reply = raw
        .request(
            json!({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
            }}}),
        )
        .await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete", "{reply}");
    let skills = result["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 2);
    let first = &skills[0];
    assert_eq!(first["uri"], FLIGHT_REPORT);
    assert_eq!(first["frontmatter"]["name"], "flight-report");
    let files = first["resources"].as_array().unwrap();
    assert_eq!(files[0]["uri"], FLIGHT_REPORT);
    let digest = files[0]["digest"].as_str().unwrap();
    assert!(rmcp::model::is_sha256_digest(digest), "{digest}");
    assert!(files[0]["size"].as_u64().unwrap() > 0);
}
