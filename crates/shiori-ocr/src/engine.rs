//! One Tesseract instance per thread, reading a prepared page word by word through the C API.

use crate::image::Prepared;
use crate::text::Word;
use crate::{openmp, Languages, OcrError};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::ptr::{self, NonNull};
use std::time::{Duration, Instant};
use tesseract_sys as tess;

/// Variables set on every engine: Sauvola's local thresholds keep the text of noisy and
/// low-contrast scans that one global threshold loses (a grey, speckled test page was read at
/// 0.94 instead of not at all), and Tesseract's diagnostics stay off stderr.
const VARIABLES: [(&CStr, &CStr); 2] = [
    (c"thresholding_method", c"2"),
    (c"debug_file", c"/dev/null"),
];

type Slot = RefCell<Option<Result<Engine, OcrError>>>;

thread_local! {
    static HORIZONTAL: Slot = const { RefCell::new(None) };
    static ALL: Slot = const { RefCell::new(None) };
}

/// Runs `work` with this thread's engine for `languages`, starting it on first use.
pub(crate) fn with_engine<T>(
    languages: Languages,
    work: impl FnOnce(&mut Engine) -> T,
) -> Result<T, OcrError> {
    let slot = match languages {
        Languages::Horizontal => &HORIZONTAL,
        Languages::All => &ALL,
    };
    slot.with(|slot| {
        let mut slot = slot.borrow_mut();
        match slot.get_or_insert_with(|| Engine::start(languages)) {
            Ok(engine) => Ok(work(engine)),
            Err(error) => Err(error.clone()),
        }
    })
}

/// The words of a page and how it lay.
pub(crate) struct Read {
    pub words: Vec<Word>,
    pub rotation_degrees: u16,
    pub vertical: bool,
}

pub(crate) struct Engine(NonNull<tess::TessBaseAPI>);

impl Engine {
    fn start(languages: Languages) -> Result<Engine, OcrError> {
        openmp::run_serially();
        let unavailable = OcrError::EngineUnavailable {
            languages: languages.tesseract(),
        };
        // SAFETY: creates a new API object or returns null.
        let engine = NonNull::new(unsafe { tess::TessBaseAPICreate() })
            .map(Engine)
            .ok_or(unavailable.clone())?;
        let languages = CString::new(languages.tesseract()).map_err(|_| unavailable.clone())?;
        // SAFETY: `engine` is live; a null data path means TESSDATA_PREFIX or the built-in one.
        let status =
            unsafe { tess::TessBaseAPIInit3(engine.ptr(), ptr::null(), languages.as_ptr()) };
        if status != 0 {
            return Err(unavailable);
        }
        for (name, value) in VARIABLES {
            // SAFETY: `engine` is live and both strings are NUL-terminated constants.
            unsafe { tess::TessBaseAPISetVariable(engine.ptr(), name.as_ptr(), value.as_ptr()) };
        }
        // SAFETY: `engine` is live. Automatic layout with orientation and script detection
        // turns a page scanned sideways or upside down before reading it.
        unsafe {
            tess::TessBaseAPISetPageSegMode(engine.ptr(), tess::TessPageSegMode_PSM_AUTO_OSD)
        };
        Ok(engine)
    }

    fn ptr(&self) -> *mut tess::TessBaseAPI {
        self.0.as_ptr()
    }

    /// Reads the page, giving up after `limit`.
    pub(crate) fn read(&mut self, page: &Prepared, limit: Duration) -> Result<Read, OcrError> {
        // SAFETY: `self` and `page.pix` are live; Tesseract keeps its own reference to the Pix
        // until the next image or `Clear`, both of which happen before `page` is dropped.
        unsafe { tess::TessBaseAPISetImage2(self.ptr(), page.pix.as_ptr()) };
        if let Some(dpi) = page.dpi.and_then(|dpi| i32::try_from(dpi).ok()) {
            // SAFETY: `self` is live.
            unsafe { tess::TessBaseAPISetSourceResolution(self.ptr(), dpi) };
        }
        let outcome = self.recognize(limit).map(|()| self.words());
        // SAFETY: `self` is live; frees the page's results and Tesseract's reference to the Pix.
        unsafe { tess::TessBaseAPIClear(self.ptr()) };
        outcome
    }

    fn recognize(&mut self, limit: Duration) -> Result<(), OcrError> {
        let millis = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
        let monitor = Monitor::with_deadline(millis)?;
        let started = Instant::now();
        // SAFETY: `self` is live and has an image; `monitor` outlives the call.
        let status = unsafe { tess::TessBaseAPIRecognize(self.ptr(), monitor.0.as_ptr()) };
        if started.elapsed() >= limit {
            return Err(OcrError::TimedOut(limit));
        }
        if status != 0 {
            return Err(OcrError::RecognitionFailed);
        }
        Ok(())
    }

    /// Every word of the last recognised page, in reading order.
    fn words(&mut self) -> Read {
        let mut read = Read {
            words: Vec::new(),
            rotation_degrees: 0,
            vertical: false,
        };
        // SAFETY: `self` is live and has recognised a page; the iterator is deleted below.
        let Some(words) = NonNull::new(unsafe { tess::TessBaseAPIGetIterator(self.ptr()) }) else {
            return read;
        };
        let words = ResultIterator(words);
        (read.rotation_degrees, read.vertical) = words.layout();
        loop {
            if let Some(word) = words.word() {
                read.words.push(word);
            }
            // SAFETY: the iterator is live.
            if unsafe {
                tess::TessResultIteratorNext(words.0.as_ptr(), tess::TessPageIteratorLevel_RIL_WORD)
            } == 0
            {
                break;
            }
        }
        read
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: the API object is owned by `self` alone and ended and deleted once, here.
        unsafe {
            tess::TessBaseAPIEnd(self.ptr());
            tess::TessBaseAPIDelete(self.ptr());
        }
    }
}

/// A recognition monitor carrying the page's deadline.
struct Monitor(NonNull<tess::ETEXT_DESC>);

impl Monitor {
    fn with_deadline(millis: i32) -> Result<Monitor, OcrError> {
        // SAFETY: creates a new monitor or returns null.
        let monitor = NonNull::new(unsafe { tess::TessMonitorCreate() })
            .map(Monitor)
            .ok_or(OcrError::RecognitionFailed)?;
        // SAFETY: the monitor is live; the deadline counts from now.
        unsafe { tess::TessMonitorSetDeadlineMSecs(monitor.0.as_ptr(), millis) };
        Ok(monitor)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        // SAFETY: the monitor is owned by `self` alone and deleted once, here.
        unsafe { tess::TessMonitorDelete(self.0.as_ptr()) };
    }
}

struct ResultIterator(NonNull<tess::TessResultIterator>);

impl ResultIterator {
    fn page(&self) -> *mut tess::TessPageIterator {
        // SAFETY: the iterator is live; the page iterator is a view of it, not a new object.
        unsafe { tess::TessResultIteratorGetPageIterator(self.0.as_ptr()) }
    }

    /// The word at the iterator, if it has text.
    fn word(&self) -> Option<Word> {
        let level = tess::TessPageIteratorLevel_RIL_WORD;
        // SAFETY: the iterator is live; the text is a new string freed below, or null.
        let raw = unsafe { tess::TessResultIteratorGetUTF8Text(self.0.as_ptr(), level) };
        let text = owned_text(raw)?;
        // SAFETY: the iterator is live.
        let confidence = unsafe { tess::TessResultIteratorConfidence(self.0.as_ptr(), level) };
        let para = tess::TessPageIteratorLevel_RIL_PARA;
        // SAFETY: the page iterator is a live view of `self`.
        let starts_paragraph =
            unsafe { tess::TessPageIteratorIsAtBeginningOf(self.page(), para) } != 0;
        Some(Word {
            text,
            confidence,
            starts_paragraph,
        })
    }

    /// The first block's orientation (how far it was turned to read) and writing direction.
    fn layout(&self) -> (u16, bool) {
        let (mut orientation, mut direction, mut order, mut deskew) = (0, 0, 0, 0.0f32);
        // SAFETY: the page iterator is a live view of `self`; the out-parameters outlive the
        // call.
        unsafe {
            tess::TessPageIteratorOrientation(
                self.page(),
                &mut orientation,
                &mut direction,
                &mut order,
                &mut deskew,
            )
        };
        let rotation = match orientation {
            tess::TessOrientation_ORIENTATION_PAGE_RIGHT => 90,
            tess::TessOrientation_ORIENTATION_PAGE_DOWN => 180,
            tess::TessOrientation_ORIENTATION_PAGE_LEFT => 270,
            _ => 0,
        };
        let vertical = direction == tess::TessWritingDirection_WRITING_DIRECTION_TOP_TO_BOTTOM;
        (rotation, vertical)
    }
}

impl Drop for ResultIterator {
    fn drop(&mut self) {
        // SAFETY: the iterator is owned by `self` alone and deleted once, here.
        unsafe { tess::TessResultIteratorDelete(self.0.as_ptr()) };
    }
}

/// Copies and frees a string Tesseract allocated.
fn owned_text(raw: *mut c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: Tesseract returned a NUL-terminated string it allocated; it is copied, then freed
    // once with Tesseract's deallocator.
    let text = unsafe { CStr::from_ptr(raw) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    unsafe { tess::TessDeleteText(raw) };
    Some(text)
}
