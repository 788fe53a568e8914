//! `shiori ask` and `shiori chat`: a question, or one per line of stdin, answered by
//! [`Engine::answer`] as the turns of a conversation.

use crate::cli::{AnswerArgs, AskArgs, ChatArgs, Cli};
use crate::search::scoped_filters;
use crate::{open_engine, output};
use anyhow::Result;
use shiori_core::{Answer, ConversationId, Filters, RetrievalConfig, TurnSource};
use shiori_engine::{AnswerEvent, AskOptions, Engine, Listener, Question};
use shiori_models::assets::ShioriHome;
use std::io::{BufRead, IsTerminal, Write};

/// The settings of every question asked, and the conversation they continue.
pub struct Session<'e> {
    engine: &'e Engine,
    retrieval: RetrievalConfig,
    filters: Filters,
    options: AskOptions,
    /// The sources of the last answer, for `/sources`.
    last_sources: Vec<TurnSource>,
}

impl<'e> Session<'e> {
    /// Checks `conversation` exists (its last turn's sources become `/sources`).
    pub fn new(
        engine: &'e Engine,
        args: &AnswerArgs,
        conversation: Option<ConversationId>,
    ) -> Result<Session<'e>> {
        let retrieval = engine.retrieval(
            &args
                .retrieval
                .overrides(Some(&args.refusal), args.scope.two_stage),
        )?;
        let filters = scoped_filters(engine, &args.filters, &args.scope)?;
        let last_sources = match &conversation {
            Some(id) => engine
                .conversation(id, None)?
                .turns
                .pop()
                .map(|turn| turn.sources)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(Session {
            engine,
            retrieval,
            filters,
            options: AskOptions {
                pipeline: args.pipeline,
                rerank: args.rerank,
                conversation,
                history: Vec::new(),
                owner: None,
            },
            last_sources,
        })
    }

    /// Answers `question`, printing its tokens as they arrive with `streamed`; a degraded
    /// answer is said on stderr.
    pub fn ask(&mut self, question: &str, streamed: bool) -> Result<Answer> {
        let print_tokens = output::print_token;
        let listener = Listener {
            on_event: streamed.then_some(&print_tokens as &(dyn Fn(AnswerEvent) + Sync)),
            cancel: None,
            expired: None,
        };
        let answer = self.engine.answer(
            &Question::new(question)?,
            &self.retrieval,
            &self.filters,
            &self.options,
            &listener,
        )?;
        if let Some(cause) = &answer.degraded {
            eprintln!("shiori: degraded answer: {cause}");
        }
        self.last_sources = answer.sources.iter().map(TurnSource::from).collect();
        Ok(answer)
    }

    /// The conversation questions go to, started at the first question after a `/reset`.
    fn conversation(&mut self) -> Result<()> {
        if self.options.conversation.is_none() {
            let id = self.engine.start_conversation(None)?;
            eprintln!("shiori: conversation {id} (resume it with --conversation {id})");
            self.options.conversation = Some(id);
        }
        Ok(())
    }
}

/// Reads questions from stdin until `/quit` or its end. With `json`, each answer is one line of
/// JSON and `/sources` a JSON array.
pub fn run(mut session: Session<'_>, json: bool) -> Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let streamed = !json && std::io::stdout().is_terminal();
    if interactive {
        eprintln!("Ask a question; /sources, /reset or /quit.");
    }
    let mut lines = std::io::stdin().lock().lines();
    loop {
        if interactive {
            eprint!("> ");
            std::io::stderr().flush()?;
        }
        let Some(line) = lines.next().transpose()? else {
            return Ok(());
        };
        match line.trim() {
            "" => {}
            "/quit" | "/exit" => return Ok(()),
            "/reset" => {
                session.options.conversation = None;
                session.last_sources.clear();
                eprintln!("shiori: a new conversation starts with the next question");
            }
            "/sources" => print_sources(&session.last_sources, json)?,
            question => {
                session.conversation()?;
                match session.ask(question, streamed) {
                    Ok(answer) => print_answer(&answer, json, streamed)?,
                    Err(error) => eprintln!("shiori: {error:#}"),
                }
            }
        }
    }
}

fn print_answer(answer: &Answer, json: bool, streamed: bool) -> Result<()> {
    if json {
        output::line(serde_json::to_string(answer)?)?;
    } else if streamed {
        output::line("\n")?;
    } else {
        output::line(format_args!("{}\n", answer.answer))?;
    }
    Ok(())
}

fn print_sources(sources: &[TurnSource], json: bool) -> Result<()> {
    if json {
        output::line(serde_json::to_string(sources)?)?;
        return Ok(());
    }
    if sources.is_empty() {
        output::line("No sources yet.")?;
    }
    for (number, source) in sources.iter().enumerate() {
        output::line(format_args!(
            "[{}] {} — {}",
            number + 1,
            source.title,
            source.source
        ))?;
    }
    Ok(())
}

/// `shiori ask`: one question answered (streamed on a terminal).
pub fn ask(cli: &Cli, home: &ShioriHome, args: &AskArgs) -> Result<()> {
    let AskArgs {
        question,
        answering,
        conversation,
    } = args;
    let engine = open_engine(cli, home)?;
    let mut session = Session::new(&engine, answering, conversation.clone())?;
    let streamed = !cli.json && std::io::stdout().is_terminal();
    let answer = session.ask(question, streamed)?;
    output::print(cli.json, &answer, || match streamed {
        true => format!("\n{}", output::answer_details(&answer)),
        false => output::answer(&answer),
    })
}

/// `shiori chat`: a conversation on stdin.
pub fn chat(cli: &Cli, home: &ShioriHome, args: &ChatArgs) -> Result<()> {
    let ChatArgs {
        answering,
        conversation,
    } = args;
    let engine = open_engine(cli, home)?;
    let session = Session::new(&engine, answering, conversation.clone())?;
    run(session, cli.json)
}
