/**
 * Fetch, Check and Submit on a notebook's toolbar (and the command palette), through this server's
 * `gradewright/` handlers (jupyterlab_gradewright/handlers.py), which reach the Gradewright service
 * with the server's hub token. Submit saves the notebook first, then shows the feedback in a panel
 * once graded, with a link to the submission's page on the site.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  InputDialog,
  MainAreaWidget,
  ToolbarButton,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import {
  ITranslator,
  TranslationBundle,
  nullTranslator
} from '@jupyterlab/translation';
import { DisposableSet } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

type Json = { [key: string]: any };

// The words shown to the student, in JupyterLab's language where the extension is translated
// (JupyterLab's translator, set when the plugin is activated).
let trans: TranslationBundle = nullTranslator.load('jupyterlab_gradewright');

class Refused extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly data: Json = {}
  ) {
    super(message);
  }
}

// The server side's statuses (handlers.py STATUSES): each kind of refusal has its own.
const NOTEBOOK_EXISTS = 409;
const WHICH_ASSIGNMENT = 422;
const HAND_IN_WARNED = 428;

async function call(path: string, method = 'GET', body?: Json): Promise<Json> {
  const settings = ServerConnection.makeSettings();
  const url = `${settings.baseUrl}gradewright/${path}`;
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
  }
  const response = await ServerConnection.makeRequest(url, init, settings);
  let data: Json = {};
  try {
    data = await response.json();
  } catch {
    throw new Refused(
      `the server answered ${response.status}`,
      response.status
    );
  }
  if (!response.ok) {
    throw new Refused(
      String(data.error ?? response.status),
      response.status,
      data
    );
  }
  return data;
}

function text(tag: string, content: string, className?: string): HTMLElement {
  const node = document.createElement(tag);
  node.textContent = content; // the service's words, never markup
  if (className) {
    node.className = className;
  }
  return node;
}

/**
 * A question's feedback laid out as the site lays it out (autograder/explain.py writes it): what went
 * wrong first, then each failing check ("- ") as a list item, with the line folded under it ("  ").
 */
function feedbackNode(feedback: string): HTMLElement {
  const node = document.createElement('div');
  let list: HTMLElement | null = null;
  for (const line of feedback.split('\n')) {
    if (line.startsWith('- ')) {
      list = list ?? node.appendChild(document.createElement('ul'));
      list.appendChild(text('li', line.slice(2)));
    } else if (line.startsWith('  ') && list?.lastChild) {
      list.lastChild.appendChild(
        text('span', ` ${line.trim()}`, 'jp-gradewright-folded')
      );
    } else if (line.trim()) {
      node.appendChild(text('p', line.trim()));
    }
  }
  return node;
}

/** A submission's state, then its feedback, as the site shows it to its student. */
class FeedbackPanel extends Widget {
  constructor(private job: Json) {
    super();
    this.addClass('jp-gradewright-feedback');
    this.id = `gradewright-feedback-${job.id}`;
    this.title.label = trans.__('Feedback: %1', job.assignment);
    this.title.closable = true;
    this.render();
  }

  update_job(job: Json): void {
    this.job = job;
    this.render();
  }

  private render(): void {
    const job = this.job;
    const node = this.node;
    node.replaceChildren();
    node.appendChild(text('h2', `Submission ${job.id} of ${job.assignment}`));
    node.appendChild(text('p', `State: ${job.state}`, 'jp-gradewright-state'));
    const report = job.report as Json | undefined;
    if (report) {
      // The score and lateness in the site's words, written by the server side with the site's code.
      const lines: string[] = job.score_lines ?? [];
      if (lines.length) {
        lines.forEach((line, index) =>
          node.appendChild(
            text(
              'p',
              line,
              index === 0 ? 'jp-gradewright-score' : 'jp-gradewright-late'
            )
          )
        );
      } else {
        node.appendChild(
          text('p', `Hidden tests' results: ${report.hidden_results}`)
        );
      }
      const table = document.createElement('table');
      const head = document.createElement('tr');
      ['Question', 'Score', 'Status'].forEach(label =>
        head.appendChild(text('th', label))
      );
      table.appendChild(head);
      for (const question of report.questions ?? []) {
        const row = document.createElement('tr');
        row.appendChild(text('td', String(question.id)));
        // Rounded by the server side as the site rounds (gradewright.cell.question_score).
        row.appendChild(text('td', String(question.shown ?? '')));
        row.appendChild(text('td', String(question.status ?? '')));
        table.appendChild(row);
        if (question.feedback && question.status !== 'passed') {
          const cell = document.createElement('td');
          cell.colSpan = 3;
          cell.appendChild(feedbackNode(String(question.feedback)));
          const under = document.createElement('tr');
          under.className = 'jp-gradewright-question-feedback';
          under.appendChild(cell);
          table.appendChild(under);
        }
      }
      node.appendChild(table);
    } else if (job.state === 'queued' || job.state === 'grading') {
      node.appendChild(
        text('p', 'Grading… this panel shows the feedback when it is ready.')
      );
    }
    if (job.error) {
      node.appendChild(text('p', String(job.error), 'jp-gradewright-error'));
    }
    const link = document.createElement('a');
    link.href = String(job.page_url);
    link.target = '_blank';
    link.rel = 'noopener';
    link.textContent = trans.__('Open the submission page');
    const paragraph = document.createElement('p');
    paragraph.appendChild(link);
    node.appendChild(paragraph);
  }
}

async function fetchAssignment(app: JupyterFrontEnd): Promise<void> {
  let listed: Json;
  try {
    listed = await call('assignments');
  } catch (error) {
    await showErrorMessage(
      trans.__('Fetch refused'),
      String((error as Error).message)
    );
    return;
  }
  // Each offered by its title and due time, as the server side words them (handlers.py _listed).
  const byLabel = new Map<string, string>();
  for (const assignment of listed.assignments ?? []) {
    byLabel.set(
      String(assignment.label ?? assignment.name),
      String(assignment.name)
    );
  }
  const picked = await InputDialog.getItem({
    title: trans.__('Fetch which assignment?'),
    items: [...byLabel.keys()]
  });
  const name = byLabel.get(picked.value ?? '');
  if (!picked.button.accept || !name) {
    return;
  }
  let fetched: Json;
  try {
    fetched = await call('fetch', 'POST', { assignment: name });
  } catch (error) {
    if (!(error instanceof Refused) || error.status !== NOTEBOOK_EXISTS) {
      await showErrorMessage(
        trans.__('Fetch refused'),
        String((error as Error).message)
      );
      return;
    }
    // The notebook is there already: the student's work, replaced only if they say so.
    const replace = await showDialog({
      title: trans.__('Replace your notebook?'),
      body: `${error.message.replace(/; pass overwrite=True to replace it$/, '')}. Replace it with the released notebook? Your work in it would be lost.`,
      buttons: [
        Dialog.cancelButton({ label: trans.__('Keep mine') }),
        Dialog.warnButton({ label: trans.__('Replace') })
      ]
    });
    if (!replace.button.accept) {
      return;
    }
    fetched = await call('fetch', 'POST', {
      assignment: name,
      overwrite: true
    });
  }
  await app.commands.execute('docmanager:open', { path: fetched.path });
}

async function checkNotebook(panel: NotebookPanel): Promise<void> {
  await panel.context.save();
  try {
    const checked = await call('check', 'POST', { path: panel.context.path });
    const body = document.createElement('div');
    for (const result of checked.results ?? []) {
      body.appendChild(
        text(
          'p',
          `${result.question}: ${result.passed ? 'passed' : 'FAILED'} ${result.message ?? ''}`
        )
      );
    }
    if (!(checked.results ?? []).length) {
      body.appendChild(text('p', 'This notebook has no public tests.'));
    }
    // The practice checks, run on the server (signed in, and the assignment has some): each one's
    // sentence and pass or fail, never its code or its inputs.
    for (const line of checked.practice ?? []) {
      body.appendChild(text('p', line));
    }
    await showDialog({
      title: trans.__('Public tests'),
      body: new Widget({ node: body }),
      buttons: [Dialog.okButton()]
    });
  } catch (error) {
    await showErrorMessage(
      trans.__('Check refused'),
      String((error as Error).message)
    );
  }
}

/**
 * The server's warnings of a hand-in now (late; a better or an on-time grade replaced), each a
 * sentence, as the site's hand-in page shows them: true if the student hands in all the same.
 */
async function confirmHandIn(warnings: string[]): Promise<boolean> {
  const body = document.createElement('div');
  body.className = 'jp-gradewright-warnings';
  for (const sentence of warnings) {
    body.appendChild(text('p', sentence));
  }
  const answer = await showDialog({
    title: trans.__('Hand in now?'),
    body: new Widget({ node: body }),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Do not hand in') }),
      Dialog.warnButton({ label: trans.__('Hand in anyway') })
    ]
  });
  return answer.button.accept;
}

async function submitNotebook(
  app: JupyterFrontEnd,
  panel: NotebookPanel
): Promise<void> {
  await panel.context.save(); // what is handed in is what the student sees
  const asked: Json = { path: panel.context.path };
  let job: Json;
  for (;;) {
    try {
      job = await call('submit', 'POST', asked);
      break;
    } catch (error) {
      if (
        error instanceof Refused &&
        error.status === WHICH_ASSIGNMENT &&
        asked.assignment === undefined
      ) {
        // A notebook not fetched from the course does not say its assignment: the student chooses.
        const chosen = await InputDialog.getItem({
          title: trans.__('Hand this notebook in for which assignment?'),
          items: (error.data.assignments ?? []).map(String)
        });
        if (!chosen.button.accept || !chosen.value) {
          return;
        }
        asked.assignment = chosen.value;
      } else if (
        error instanceof Refused &&
        error.status === HAND_IN_WARNED &&
        asked.anyway === undefined
      ) {
        // Late, or a better or an on-time grade replaced: said first, handed in only if confirmed.
        if (!(await confirmHandIn((error.data.warnings ?? []).map(String)))) {
          return;
        }
        asked.anyway = true;
      } else {
        await showErrorMessage(
          trans.__('Submit refused'),
          String((error as Error).message)
        );
        return;
      }
    }
  }
  const content = new FeedbackPanel(job);
  const widget = new MainAreaWidget({ content });
  widget.id = content.id;
  widget.title.label = content.title.label;
  widget.title.closable = true;
  app.shell.add(widget, 'main', { mode: 'split-right' });
  while (job.state === 'queued' || job.state === 'grading') {
    await new Promise(resolve => setTimeout(resolve, 2000));
    if (widget.isDisposed) {
      return;
    }
    try {
      job = await call(`submissions/${job.id}`);
    } catch (error) {
      await showErrorMessage(
        trans.__('Feedback'),
        String((error as Error).message)
      );
      return;
    }
    content.update_job(job);
  }
}

// The commands take no arguments: they act on the current notebook.
const NO_ARGUMENTS = { args: { type: 'object' as const, properties: {} } };

/** The toolbar's buttons for one notebook: Fetch, Check and Submit, in that order. */
function toolbarButtons(
  app: JupyterFrontEnd,
  panel: NotebookPanel
): [string, ToolbarButton][] {
  return [
    [
      'gradewright-fetch',
      new ToolbarButton({
        label: trans.__('Fetch'),
        tooltip: trans.__('Fetch an assignment'),
        onClick: () => void fetchAssignment(app)
      })
    ],
    [
      'gradewright-check',
      new ToolbarButton({
        label: trans.__('Check'),
        tooltip: trans.__('Run the public tests'),
        onClick: () => void checkNotebook(panel)
      })
    ],
    [
      'gradewright-submit',
      new ToolbarButton({
        label: trans.__('Submit'),
        tooltip: trans.__('Hand this notebook in'),
        onClick: () => void submitNotebook(app, panel)
      })
    ]
  ];
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gradewright:plugin',
  description: 'Fetch, Check and Submit for Gradewright assignments',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    trans = (translator ?? nullTranslator).load('jupyterlab_gradewright');
    const current = () => tracker.currentWidget;
    app.commands.addCommand('gradewright:fetch', {
      label: trans.__('Fetch an assignment'),
      describedBy: NO_ARGUMENTS,
      execute: () => fetchAssignment(app)
    });
    app.commands.addCommand('gradewright:check', {
      label: trans.__('Check (public tests)'),
      describedBy: NO_ARGUMENTS,
      isEnabled: () => current() !== null,
      execute: () => (current() ? checkNotebook(current()!) : undefined)
    });
    app.commands.addCommand('gradewright:submit', {
      label: trans.__('Submit to Gradewright'),
      describedBy: NO_ARGUMENTS,
      isEnabled: () => current() !== null,
      execute: () => (current() ? submitNotebook(app, current()!) : undefined)
    });
    if (palette) {
      for (const command of [
        'gradewright:fetch',
        'gradewright:check',
        'gradewright:submit'
      ]) {
        palette.addItem({ command, category: trans.__('Gradewright') });
      }
    }
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (panel: NotebookPanel) => {
        // The toolbar shows the buttons; the set disposes of them with the extension.
        const owned = new DisposableSet();
        toolbarButtons(app, panel).forEach(([name, button], index) => {
          panel.toolbar.insertItem(10 + index, name, button);
          owned.add(button);
        });
        return owned;
      }
    });
  }
};

export default plugin;
