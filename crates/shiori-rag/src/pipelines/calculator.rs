//! Arithmetic for the agent's `calculate` tool: + - * / % ^ and parentheses over decimals.

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum CalcError {
    #[error("the result is not a finite number")]
    NotFinite,
    #[error("unexpected {found:?} at position {position}")]
    Unexpected { found: char, position: usize },
    #[error("division by zero")]
    DivisionByZero,
    #[error("a parenthesis is not closed")]
    Unclosed,
    #[error("expected a number, found {0:?}")]
    ExpectedNumber(char),
    #[error("expected a number at the end")]
    EndedEarly,
    #[error("{text:?} is not a number")]
    NotANumber {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
}

/// Evaluates `expression`, or says why it cannot.
pub(crate) fn evaluate(expression: &str) -> Result<f64, CalcError> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.sum()?;
    match parser.peek() {
        None if value.is_finite() => Ok(value),
        None => Err(CalcError::NotFinite),
        Some(found) => Err(CalcError::Unexpected {
            found,
            position: parser.at + 1,
        }),
    }
}

struct Parser {
    tokens: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<f64, CalcError> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let right = self.product()?;
            value = if op == '+' {
                value + right
            } else {
                value - right
            };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<f64, CalcError> {
        let mut value = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let right = self.power()?;
            value = match op {
                '*' => value * right,
                '/' if right == 0.0 => return Err(CalcError::DivisionByZero),
                '/' => value / right,
                _ => value % right,
            };
        }
        Ok(value)
    }

    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.at += 1;
            return Ok(base.powf(self.power()?));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, CalcError> {
        match self.peek() {
            Some('-') => {
                self.at += 1;
                Ok(-self.power()?)
            }
            Some('(') => {
                self.at += 1;
                let value = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(CalcError::Unclosed);
                }
                self.at += 1;
                Ok(value)
            }
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Result<f64, CalcError> {
        let start = self.at;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '.' || c == ',') {
            self.at += 1;
        }
        let text: String = self.tokens[start..self.at]
            .iter()
            .filter(|c| **c != ',')
            .collect();
        text.parse::<f64>().map_err(|source| match self.peek() {
            Some(c) if text.is_empty() => CalcError::ExpectedNumber(c),
            _ if text.is_empty() => CalcError::EndedEarly,
            _ => CalcError::NotANumber {
                text: text.clone(),
                source,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn evaluates_with_precedence_and_rejects_garbage() {
        assert_eq!(evaluate("2 + 3 * 4"), Ok(14.0));
        assert_eq!(evaluate("(2 + 3) * 4"), Ok(20.0));
        assert_eq!(evaluate("-2 ^ 2"), Ok(-4.0));
        assert_eq!(evaluate("2 ^ 3 ^ 2"), Ok(512.0));
        assert_eq!(evaluate("100 * 1,000 / 50"), Ok(2000.0));
        assert!(evaluate("1 / 0").is_err());
        assert!(evaluate("2 +").is_err());
        assert!(evaluate("(1 + 2").is_err());
        assert!(evaluate("rm -rf").is_err());
    }
}
