use super::*;
use serde_json::json;

#[test]
fn results_parse_every_documented_shape() {
    let v: Option<InputBoxResult> = serde_json::from_value(json!({"value": "x"})).unwrap();
    assert_eq!(v, Some(InputBoxResult::Value { value: "x".into() }));
    let v: Option<InputBoxResult> = serde_json::from_value(json!({"back": true})).unwrap();
    assert_eq!(v, Some(InputBoxResult::Back { back: true }));
    let v: Option<InputBoxResult> = serde_json::from_value(json!({"skip": true})).unwrap();
    assert_eq!(v, Some(InputBoxResult::Skip { skip: true }));
    let v: Option<InputBoxResult> = serde_json::from_value(json!(null)).unwrap();
    assert_eq!(v, None);
    let v: Option<QuickPickResult> = serde_json::from_value(json!({"selected": [0, 2]})).unwrap();
    assert_eq!(
        v,
        Some(QuickPickResult::Selected {
            selected: vec![0, 2]
        })
    );
    let v: Option<EditDraftResult> =
        serde_json::from_value(json!({"action": "accept", "text": "t"})).unwrap();
    assert_eq!(v, Some(EditDraftResult::Accept { text: "t".into() }));
    let v: Option<EditDraftResult> = serde_json::from_value(json!({"action": "reject"})).unwrap();
    assert_eq!(v, Some(EditDraftResult::Reject));
}

#[test]
fn params_serialize_with_contract_field_names() {
    let p = InputBoxParams {
        id: "1".into(),
        title: "t".into(),
        validation_message: Some("bad".into()),
        total_steps: Some(3),
        can_go_back: true,
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_value(&p).unwrap(),
        json!({"id":"1","title":"t","validationMessage":"bad","totalSteps":3,"canGoBack":true})
    );
    let s = ServerStatusParams {
        name: "a".into(),
        label: None,
        state: ServerState::NeedsTrust,
        protocol_version: Some("2026-07-28".into()),
        source: None,
        message: None,
    };
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({"name":"a","state":"needsTrust","protocolVersion":"2026-07-28"})
    );
}

#[test]
fn editor_capabilities_default_to_absent() {
    let caps =
        EditorCapabilities::from_experimental(Some(&json!({"mcpSidecar": {"quickPick": true}})));
    assert!(caps.quick_pick && !caps.input_box);
    assert_eq!(
        EditorCapabilities::from_experimental(None),
        EditorCapabilities::default()
    );
    let bad = EditorCapabilities::from_experimental(Some(&json!({"mcpSidecar": 3})));
    assert_eq!(bad, EditorCapabilities::default());
}

#[test]
fn template_values_keep_an_objects_order_and_refuse_other_shapes() {
    let args: ExpandUriTemplateArgs = serde_json::from_str(
        r#"{"uriTemplate": "x{?keys*}", "values": {"keys": {"semi": ";", "dot": ".", "comma": ","}, "l": ["a"], "s": "b"}}"#,
    )
    .unwrap();
    let values = args.values.unwrap();
    assert_eq!(
        values["keys"],
        TemplateValue::Map(vec![
            ("semi".into(), ";".into()),
            ("dot".into(), ".".into()),
            ("comma".into(), ",".into()),
        ])
    );
    assert_eq!(values["l"], TemplateValue::List(vec!["a".into()]));
    assert_eq!(values["s"], TemplateValue::String("b".into()));
    let back = serde_json::to_string(&values["keys"]).unwrap();
    assert_eq!(back, r#"{"semi":";","dot":".","comma":","}"#);
    for bad in [
        json!(1),
        json!(null),
        json!(true),
        json!([1]),
        json!({"a": 1}),
        json!([["a"]]),
    ] {
        let parsed = serde_json::from_value::<TemplateValue>(bad.clone());
        assert!(parsed.is_err(), "{bad}");
    }
    let message = serde_json::from_value::<TemplateValue>(json!(1))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("a string, a list of strings or an object whose values are strings"),
        "{message}"
    );
    let args: ExpandUriTemplateArgs =
        serde_json::from_value(json!({"uriTemplate": "x", "values": null})).unwrap();
    assert_eq!(args.values, None);
}
