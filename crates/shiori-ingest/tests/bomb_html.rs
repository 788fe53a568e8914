//! A page of 200,000 nested elements (2.2 MB) fails alone, and quickly: the parser's cost grows
//! with the square of the depth (issue 48, item 5).

mod bombs;

#[test]
fn a_page_nested_two_hundred_thousand_deep_fails_alone() {
    let depth = 200_000;
    let page = format!(
        "<html><body>{}deep text{}</body></html>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    bombs::assert_fails_alone("nested.html", page.as_bytes(), "nests elements deeper");
}
