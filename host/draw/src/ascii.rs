//! lstopo's text art (`lstopo-ascii.c`): boxes drawn with `-|/\+` (or
//! Unicode box-drawing characters), 2 columns per 10 units across and one
//! row per 10 units down.

use crate::{Item, Scene};

const UP: u8 = 1;
const DOWN: u8 = 2;
const LEFT: u8 = 4;
const RIGHT: u8 = 8;

struct Grid {
    cells: Vec<Vec<char>>,
    width: usize,
    height: usize,
    utf8: bool,
}

fn xscale(x: u32) -> u32 {
    x.wrapping_mul(2) / 10
}
fn yscale(y: u32) -> u32 {
    y / 10
}

impl Grid {
    fn put(&mut self, x: u32, y: u32, c: char) {
        let (x, y) = (x as usize, y as usize);
        if x >= self.width || y >= self.height {
            return;
        }
        self.cells[y][x] = c;
    }

    fn directions_of(&self, c: char) -> u8 {
        if self.utf8 {
            match c {
                '\u{250c}' => DOWN | RIGHT,
                '\u{2510}' => DOWN | LEFT,
                '\u{2514}' => UP | RIGHT,
                '\u{2518}' => UP | LEFT,
                '\u{2500}' => LEFT | RIGHT,
                '\u{2502}' => DOWN | UP,
                '\u{2577}' => DOWN,
                '\u{2575}' => UP,
                '\u{2576}' => RIGHT,
                '\u{2574}' => LEFT,
                '\u{251c}' => DOWN | UP | RIGHT,
                '\u{2524}' => DOWN | UP | LEFT,
                '\u{252c}' => DOWN | LEFT | RIGHT,
                '\u{2534}' => UP | LEFT | RIGHT,
                '\u{253c}' => DOWN | UP | LEFT | RIGHT,
                _ => 0,
            }
        } else {
            match c {
                '-' => LEFT | RIGHT,
                '|' => DOWN | UP,
                '/' | '\\' | '+' => DOWN | UP | LEFT | RIGHT,
                _ => 0,
            }
        }
    }

    fn char_of(&self, d: u8) -> char {
        if self.utf8 {
            match d {
                x if x == DOWN | RIGHT => '\u{250c}',
                x if x == DOWN | LEFT => '\u{2510}',
                x if x == UP | RIGHT => '\u{2514}',
                x if x == UP | LEFT => '\u{2518}',
                x if x == LEFT | RIGHT => '\u{2500}',
                x if x == DOWN | UP => '\u{2502}',
                DOWN => '\u{2577}',
                UP => '\u{2575}',
                RIGHT => '\u{2576}',
                LEFT => '\u{2574}',
                x if x == DOWN | UP | RIGHT => '\u{251c}',
                x if x == DOWN | UP | LEFT => '\u{2524}',
                x if x == DOWN | LEFT | RIGHT => '\u{252c}',
                x if x == UP | LEFT | RIGHT => '\u{2534}',
                x if x == DOWN | UP | LEFT | RIGHT => '\u{253c}',
                _ => ' ',
            }
        } else {
            match d {
                x if x == DOWN | RIGHT => '/',
                x if x == DOWN | LEFT => '\\',
                x if x == UP | RIGHT => '\\',
                x if x == UP | LEFT => '/',
                x if x == LEFT | RIGHT => '-',
                x if x == DOWN | UP => '|',
                DOWN | UP => '|',
                RIGHT | LEFT => '-',
                0 => ' ',
                _ => '+',
            }
        }
    }

    fn merge(&mut self, x: u32, y: u32, or: u8, andnot: u8) {
        let (ux, uy) = (x as usize, y as usize);
        if ux >= self.width || uy >= self.height {
            return;
        }
        let cur = self.cells[uy][ux];
        let d = (self.directions_of(cur) & !andnot) | or;
        let c = self.char_of(d);
        self.put(x, y, c);
    }

    fn draw_box(&mut self, x: u32, width: u32, y: u32, height: u32) {
        let x1 = xscale(x);
        let width = xscale(width);
        let y1 = yscale(y);
        let height = yscale(height);
        let x2 = (x1 + width).wrapping_sub(1);
        let y2 = (y1 + height).wrapping_sub(1);
        self.merge(x1, y1, DOWN | RIGHT, 0);
        self.merge(x2, y1, DOWN | LEFT, 0);
        self.merge(x1, y2, UP | RIGHT, 0);
        self.merge(x2, y2, UP | LEFT, 0);
        // Bounded by the grid: lstopo's loops would wrap on empty boxes
        // but write nothing outside the grid.
        let wmax = (width.wrapping_sub(1)).min(self.width as u32 + 1);
        for i in 1..wmax {
            self.merge(x1 + i, y1, LEFT | RIGHT, DOWN);
            self.merge(x1 + i, y2, LEFT | RIGHT, UP);
        }
        let hmax = (height.wrapping_sub(1)).min(self.height as u32 + 1);
        for j in 1..hmax {
            self.merge(x1, y1 + j, UP | DOWN, RIGHT);
            self.merge(x2, y1 + j, UP | DOWN, LEFT);
        }
        for j in y1 + 1..y2.min(self.height as u32) {
            for i in x1 + 1..x2.min(self.width as u32) {
                self.put(i, j, ' ');
            }
        }
    }

    fn line(&mut self, x1: u32, y1: u32, x2: u32, y2: u32) {
        let (mut x1, mut y1, mut x2, mut y2) = (xscale(x1), yscale(y1), xscale(x2), yscale(y2));
        if x1 > x2 {
            std::mem::swap(&mut x1, &mut x2);
        }
        if y1 > y2 {
            std::mem::swap(&mut y1, &mut y2);
        }
        if x1 == x2 {
            if y1 != y2 {
                self.merge(x1, y1, DOWN, 0);
                self.merge(x1, y2, UP, 0);
            }
            for j in y1 + 1..y2 {
                self.merge(x1, j, DOWN | UP, 0);
            }
        } else if y1 == y2 {
            self.merge(x1, y1, RIGHT, 0);
            self.merge(x2, y1, LEFT, 0);
            for i in x1 + 1..x2 {
                self.merge(i, y1, LEFT | RIGHT, 0);
            }
        }
    }

    fn text(&mut self, x: u32, y: u32, s: &str) {
        let (mut x, y) = (xscale(x), yscale(y));
        for c in s.chars() {
            self.put(x, y, c);
            x += 1;
        }
    }
}

/// Whether the locale of the environment is UTF-8 (lstopo then draws with
/// box-drawing characters).
pub fn locale_is_utf8() -> bool {
    for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Ok(v) = std::env::var(var)
            && !v.is_empty()
        {
            let v = v.to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8");
        }
    }
    false
}

/// Renders a scene laid out with [`crate::Backend::Ascii`] as lstopo's text
/// art (without terminal colours).
pub fn render(scene: &Scene, utf8: bool) -> String {
    let width = xscale(scene.width + 1) as usize;
    let height = yscale(scene.height + 1) as usize;
    let mut g = Grid {
        cells: vec![vec![' '; width]; height],
        width,
        height,
        utf8,
    };
    for it in &scene.items {
        match it {
            Item::Box {
                x,
                y,
                width,
                height,
                ..
            } => g.draw_box(*x, *width, *y, *height),
            Item::Line { x1, y1, x2, y2, .. } => g.line(*x1, *y1, *x2, *y2),
            Item::Text { x, y, text, .. } => g.text(*x, *y, text),
        }
    }
    let mut out = String::with_capacity((width + 1) * height);
    for row in g.cells {
        out.extend(row);
        out.push('\n');
    }
    out
}
