//! Trusted input (`trusted: true`, real input through Chrome's debugger) on an allowed site
//! whose page is hostile: it moves focus into a frame of another site, slides such a frame over
//! the button being clicked, or adds one after the first key. Real input must never reach a
//! site the user did not allow, and the assistant is told why nothing was done. The same rule
//! holds for captures of the tab (`screenshot`, `print_pdf`), which would show such a frame's
//! pixels and words. In real Chromium through the real `tabwire mcp`.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

/// A browser with a CDP pipe (to read what each frame received), `tabwire mcp` on it, and
/// trusted input turned on for the allowed loopback site, as the user would.
async fn hostile_setup() -> (Chromium, Cdp, Mcp) {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    browser.sites(&["allow", "--trusted-input", "http://127.0.0.1:*"]);
    (browser, cdp, mcp)
}

async fn open(mcp: &Mcp, url: String) -> i64 {
    let opened = mcp.ok("open_tab", json!({ "url": url })).await;
    opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"))
}

/// A CDP session on the target of `kind` (`page`, `iframe`) whose URL contains `part`, once
/// its page script ran (`window.got` or `window.seen` exists).
async fn session(cdp: &Cdp, kind: &str, part: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let target = loop {
        match cdp.target_id(kind, part).await {
            Ok(id) => break id,
            Err(e) => assert!(Instant::now() < deadline, "{e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let session = cdp.attach(&target).await.unwrap();
    cdp.wait_for(&session, "!!(window.got || window.seen)", Duration::from_secs(10)).await.unwrap();
    session
}

/// What the other site's frame received: every key, text and click, with `isTrusted`.
async fn received(cdp: &Cdp, frame: &str) -> Value {
    cdp.eval(frame, "got").await.unwrap()
}

/// A tool's result: it must be `not_actionable` naming the other site's origin and what to do.
fn refused(result: &CallToolResult, other_origin: &str) {
    let said = text(result);
    assert_eq!(result.is_error, Some(true), "should have been refused, it said: {said}");
    assert!(said.starts_with("not_actionable:"), "{said}");
    assert!(said.contains(other_origin), "names the other site's origin: {said}");
    assert!(said.contains("without `trusted`"), "says what to do: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_typing_never_reaches_a_frame_of_a_site_not_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let other = stranger.origin();

    // The input's focus handler moves focus into the other site's frame: neither the text nor
    // a key reaches it, and the tool says why.
    let receiver = stranger.url("attack/receiver.html?thief");
    let tab = open(&mcp, pages.url(&format!("attack/focus-thief.html?frame={receiver}"))).await;
    let frame = session(&cdp, "iframe", "receiver.html?thief").await;
    let page = session(&cdp, "page", "focus-thief.html").await;
    let typed = json!({ "tab_id": tab, "selector": "#text", "text": "my secret", "trusted": true });
    let result = mcp.call("type", typed).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &other);
    let keys = json!({ "tab_id": tab, "selector": "#text", "keys": "x Enter", "trusted": true });
    let result = mcp.call("press_key", keys).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &other);
    assert_eq!(cdp.eval(&page, "seen").await.unwrap(), json!([]), "nothing typed anywhere");

    // No other site's frame until the first key lands; then the page adds one and moves focus
    // into it. Each key is checked again before it is sent: the rest never reach the frame.
    let receiver = stranger.url("attack/receiver.html?late");
    let tab = open(&mcp, pages.url(&format!("attack/late-frame.html?frame={receiver}"))).await;
    let page = session(&cdp, "page", "late-frame.html").await;
    let many = ["q"; 150].join(" ");
    let keys = json!({ "tab_id": tab, "selector": "#text", "keys": many, "trusted": true });
    let result = mcp.call("press_key", keys).await;
    let frame = session(&cdp, "iframe", "receiver.html?late").await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    let said = text(&result);
    assert_eq!(result.is_error, Some(true), "press_key should have been stopped: {said}");
    assert!(said.starts_with("not_actionable:") && said.contains(&other), "{said}");
    let seen = cdp.eval(&page, "seen").await.unwrap();
    assert_eq!(
        seen[0],
        json!({ "key": "q", "trusted": true }),
        "the first key reached the page's own input"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_click_never_lands_in_a_frame_of_a_site_not_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");

    // Scrolling the button into view makes the page slide the other site's frame over it.
    let receiver = stranger.url("attack/receiver.html?slider");
    let tab = open(&mcp, pages.url(&format!("attack/slider.html?frame={receiver}"))).await;
    let frame = session(&cdp, "iframe", "receiver.html?slider").await;
    let page = session(&cdp, "page", "slider.html").await;
    let click = json!({ "tab_id": tab, "selector": "#go", "trusted": true });
    let result = mcp.call("click", click).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &stranger.origin());
    assert_eq!(cdp.eval(&page, "seen").await.unwrap(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_input_still_reaches_a_page_whose_frames_are_all_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let own = pages.url("attack/receiver.html?own");
    let tab = open(&mcp, pages.url(&format!("attack/honest.html?frame={own}"))).await;
    let page = session(&cdp, "page", "honest.html").await;
    cdp.wait_for(
        &page,
        "document.getElementById('own').contentWindow.got",
        Duration::from_secs(10),
    )
    .await
    .unwrap();

    mcp.ok("click", json!({ "tab_id": tab, "selector": "#go", "trusted": true })).await;
    mcp.ok("type", json!({ "tab_id": tab, "selector": "#text", "text": "hello", "trusted": true }))
        .await;
    let seen = cdp.eval(&page, "seen").await.unwrap();
    assert_eq!(seen[0], json!({ "on": "go", "trusted": true }), "{seen}");
    assert_eq!(seen[1], json!({ "on": "input", "value": "hello", "trusted": true }), "{seen}");
    assert_eq!(
        cdp.eval(&page, "document.getElementById('own').contentWindow.got").await.unwrap(),
        json!([])
    );
}

/// The pixels of a PNG as Chrome encodes a screenshot (8-bit RGB or RGBA, not interlaced):
/// width, height and RGB triples, row by row.
fn png_pixels(png: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    use std::io::Read;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let (mut at, mut data, mut head) = (8, Vec::new(), None);
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let (kind, body) = (&png[at + 4..at + 8], &png[at + 8..at + 8 + len]);
        match kind {
            b"IHDR" => head = Some(body.to_vec()),
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let head = head.expect("an IHDR chunk");
    let width = u32::from_be_bytes(head[0..4].try_into().unwrap()) as usize;
    let height = u32::from_be_bytes(head[4..8].try_into().unwrap()) as usize;
    let bpp = match (head[8], head[9], head[12]) {
        (8, 2, 0) => 3,
        (8, 6, 0) => 4,
        other => panic!("a PNG of depth, colour type, interlace {other:?}"),
    };
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..]).read_to_end(&mut raw).unwrap();
    let stride = width * bpp;
    let (mut rows, mut prev) = (Vec::with_capacity(width * height), vec![0u8; stride]);
    for y in 0..height {
        let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let mut row = line[1..].to_vec();
        for i in 0..stride {
            let a = if i >= bpp { row[i - bpp] as i16 } else { 0 };
            let (b, c) = (prev[i] as i16, if i >= bpp { prev[i - bpp] as i16 } else { 0 });
            let add = match line[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            row[i] = row[i].wrapping_add(add as u8);
        }
        rows.extend(row.chunks(bpp).map(|p| [p[0], p[1], p[2]]));
        prev = row;
    }
    (width, height, rows)
}

/// The pixels of a screenshot result's image block.
fn screenshot_pixels(result: &CallToolResult) -> (usize, usize, Vec<[u8; 3]>) {
    use base64::Engine;
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .unwrap_or_else(|| panic!("an image block in {}", text(result)));
    png_pixels(&base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap())
}

/// How many pixels are (within a little of) `rgb`.
fn count(pixels: &[[u8; 3]], rgb: [u8; 3]) -> usize {
    pixels.iter().filter(|p| p.iter().zip(rgb).all(|(&a, b)| a.abs_diff(b) <= 8)).count()
}

/// What a person reads in a PDF (pdftotext, from poppler-utils), words joined by single spaces.
fn pdf_words(path: &str) -> String {
    let out = std::process::Command::new("pdftotext")
        .args([path, "-"])
        .output()
        .expect("pdftotext (poppler-utils: scripts/setup.sh installs it)");
    String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A capture refused: `site_not_allowed`, naming the other site and what to do.
fn capture_refused(result: &CallToolResult, other_origin: &str) {
    let said = text(result);
    assert_eq!(result.is_error, Some(true), "should have been refused, it said: {said}");
    assert!(said.starts_with("site_not_allowed:"), "{said}");
    assert!(said.contains(&format!("frame of {other_origin}")), "names the frame's site: {said}");
    assert!(
        said.contains("read_page") && said.contains("tabwire sites allow"),
        "says what to do: {said}"
    );
}

const MAGENTA: [u8; 3] = [0xff, 0x00, 0xff];
const FRAMER: [u8; 3] = [0xe0, 0xf0, 0xe0];
const SECRET: &str = "hushhush quokka ledger";

/// `screenshot` (no switch) and `print_pdf` of an allowed page that embeds another site's page:
/// neither the frame's pixels nor its words come back — the capture is refused while the frame
/// is there, and works once it is gone. Neither capture shows tabwire's acting mark, even while
/// another call acts in the tab.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captures_carry_nothing_of_a_frame_of_a_site_not_allowed_nor_the_acting_mark() {
    let (_browser, cdp, mcp) = hostile_setup().await; // print_pdf needs the Trusted input switch
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let other = stranger.origin();
    let framer =
        pages.url(&format!("attack/framer.html?frame={}", stranger.url("attack/secret.html")));
    let opened = mcp.ok("open_tab", json!({ "url": framer, "active": true })).await;
    let tab = opened["tab"]["id"].as_i64().unwrap();
    session(&cdp, "iframe", "secret.html").await;
    let page = session(&cdp, "page", "framer.html").await;
    // The frame is on screen: two frames painted in the top page after the other site's loaded.
    let painted =
        "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))";
    cdp.eval(&page, painted).await.unwrap();

    for args in
        [json!({ "tab_id": tab, "max_dim": 8000 }), json!({ "tab_id": tab, "full_page": true })]
    {
        let shot = mcp.call("screenshot", args.clone()).await;
        if shot.is_error != Some(true) {
            let (_, _, pixels) = screenshot_pixels(&shot);
            assert_eq!(
                count(&pixels, MAGENTA),
                0,
                "{args}: the other site's frame is in the screenshot"
            );
        }
        capture_refused(&shot, &other);
    }
    let printed = mcp.call("print_pdf", json!({ "tab_id": tab })).await;
    if printed.is_error != Some(true) {
        let path =
            printed.structured_content.as_ref().unwrap()["path"].as_str().unwrap().to_owned();
        let words = pdf_words(&path);
        assert!(!words.contains(SECRET), "the other site's words are in the PDF: {words:?}");
    }
    capture_refused(&printed, &other);

    // Without the frame, both work; the mark of a call acting in the tab meanwhile is in neither.
    mcp.ok("click", json!({ "tab_id": tab, "selector": "#drop" })).await;
    cdp.wait_for(&page, "!document.getElementById('other')", Duration::from_secs(5)).await.unwrap();
    let badge = "document.querySelector('tabwire-badge') !== null";
    let acting =
        mcp.call("wait_for", json!({ "tab_id": tab, "text": "never here", "timeout_ms": 8_000 }));
    let captures = async {
        cdp.wait_for(&page, badge, Duration::from_secs(5))
            .await
            .expect("the mark while a call acts");
        cdp.eval(&page, painted).await.unwrap();
        let shot = mcp.call("screenshot", json!({ "tab_id": tab, "max_dim": 8000 })).await;
        assert_ne!(shot.is_error, Some(true), "{}", text(&shot));
        let (width, height, pixels) = screenshot_pixels(&shot);
        assert!(count(&pixels, FRAMER) > width * height / 2, "the page's own background");
        // The mark's border runs along the edges, its label sits in the bottom-right corner.
        let edge = |x: usize, y: usize| x < 4 || y < 4 || x + 4 >= width || y + 4 >= height;
        let corner = |x: usize, y: usize| x + 400 >= width && y + 40 >= height;
        let marked = (0..width * height)
            .filter(|i| edge(i % width, i / width) || corner(i % width, i / width))
            .filter(|&i| count(&pixels[i..=i], FRAMER) == 0)
            .count();
        assert_eq!(marked, 0, "pixels of the acting mark on the screenshot's edges");
        // The mark is back while the call still acts.
        cdp.wait_for(&page, badge, Duration::from_secs(5)).await.expect("the mark again");
        let printed = mcp.ok("print_pdf", json!({ "tab_id": tab })).await;
        let words = pdf_words(printed["path"].as_str().unwrap());
        assert!(words.contains("Framer's own paragraph"), "{words:?}");
        assert!(!words.contains("acting in this tab"), "the acting mark is printed: {words:?}");
        assert!(!words.contains(SECRET), "{words:?}");
    };
    let (acted, ()) = tokio::join!(acting, captures);
    assert_eq!(acted.is_error, Some(true), "the wait timed out as asked: {}", text(&acted));
}
