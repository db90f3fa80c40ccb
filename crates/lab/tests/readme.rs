//! The README's key tables are the declarations: each block between
//! `<!-- generated: cclab list <target> --params --markdown -->` and `<!-- end generated -->` must
//! be exactly what that command prints. On a mismatch the failure message holds the block to
//! paste.

use cclab_lab::catalog::{Target, render};

const END: &str = "<!-- end generated -->";

#[test]
fn readme_key_tables_are_generated_from_the_declarations() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    let mut stale = String::new();
    for target in Target::ALL {
        let command = format!("cclab list {} --params --markdown", target.name());
        let begin = format!("<!-- generated: {command} -->\n");
        let want = render(target, true, true);
        let Some(start) = readme.find(&begin).map(|i| i + begin.len()) else {
            stale.push_str(&format!(
                "README.md has no block for `{command}`; add:\n{begin}{want}{END}\n\n"
            ));
            continue;
        };
        let Some(len) = readme[start..].find(END) else {
            stale.push_str(&format!(
                "README.md: the block of `{command}` has no `{END}`\n\n"
            ));
            continue;
        };
        if readme[start..start + len] != want {
            stale.push_str(&format!(
                "README.md: the block of `{command}` differs from the declarations; replace it \
                 with:\n{begin}{want}{END}\n\n"
            ));
        }
    }
    assert!(stale.is_empty(), "{stale}");
}
