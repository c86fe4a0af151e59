;;; lsp-mode-plain-test.el --- lsp-mode 8 runs the sidecar as a plain LSP server  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; Debian's elpa-lsp-mode 8.0.0 runs the sidecar as a language server of a project, with the
;; configuration of `lpt-configure' (what docs/editors.md gives a person) and without the
;; mcp-sidecar package: every flow is plain LSP 3.17.  The person's input is real minibuffer
;; input: keyboard macros (`execute-kbd-macro') that lsp-mode's own `completing-read's read.
;; <f12> in a macro waits (with a deadline) until the next minibuffer was shown and left, so
;; the keys after it are that minibuffer's.  Every wait has a deadline; nothing sleeps.
;;
;; What lsp-mode 8.0.0 does with each plain-LSP message, as these tests found it:
;; - `window/showMessageRequest' is a `completing-read' (`lsp--window-log-message-request');
;; - it declares `window.showDocument' nil (`lsp--client-capabilities'), so the sidecar names
;;   each document in `window/showMessage' ("Open PATH", `lsp--window-show-message') and the
;;   person opens it;
;; - a code action's or lens's command runs through `lsp-workspace-command-execute', a
;;   synchronous `lsp-request' (it waits up to `lsp-response-timeout', 10 s).  The sidecar
;;   answers a tool's code action and `mcp-sidecar.chooseTool' at once (`{"detached": true}')
;;   and the call goes on by itself: its form, then its result document;
;; - lsp-mode 8.0.0 has no command to run a server's command by name: M-: runs
;;   `lsp-workspace-command-execute';
;; - it shows `$/progress' in the mode line (`global-mode-string') and never sends
;;   `window/workDoneProgress/cancel': a call is cancelled with its form's Cancel, or by
;;   closing the form;
;; - the reply to a synchronous request ends lsp-mode's process filter with a `throw': the
;;   messages that came in the same read after it are dropped (emacs-lsp/lsp-mode#4323).  A
;;   message the sidecar sends right after answering such a request can be lost; a lost
;;   request (`window/workDoneProgress/create', `window/showMessageRequest') leaves the
;;   sidecar waiting for its answer;
;; - the documents live outside the project: the documents folder is a second folder of the
;;   session and the client is `:multi-root', so its files open in the same sidecar.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'package)

;; Debian's packaging: elpa-* install under /usr/share/emacs/site-lisp/elpa.
(eval-and-compile
  (setq package-directory-list '("/usr/share/emacs/site-lisp/elpa")
        package-user-dir (expand-file-name "elpa" (getenv "HOME")))
  (package-initialize))
(require 'lsp-mode)
(require 'lsp-diagnostics)
(require 'lsp-lens)
(require 'lsp-completion)
(require 'flymake)
(require 'python)

(defvar lpt-bin (getenv "MCP_SIDECAR_BIN")
  "The sidecar under test.")

(defvar lpt-home (file-name-as-directory (getenv "HOME")))

(defvar lpt-project (expand-file-name "project/" lpt-home)
  "The person's project.")

(defvar lpt-documents
  (file-name-as-directory
   (expand-file-name "mcp-sidecar/documents" (or (getenv "XDG_STATE_HOME")
                                                 (expand-file-name ".local/state" lpt-home))))
  "Where the sidecar writes its documents.")

;;;; Real minibuffer input

(defvar lpt-minibuffers nil
  "Each minibuffer shown, newest first: its prompt.")

(defvar lpt-exits 0
  "How many minibuffers were left.")

(add-hook 'minibuffer-setup-hook (lambda () (push (minibuffer-prompt) lpt-minibuffers)))
(add-hook 'minibuffer-exit-hook (lambda () (setq lpt-exits (1+ lpt-exits))))

(defun lpt-wait (predicate what &optional seconds)
  "Run the event loop until PREDICATE returns non-nil; return that.
Fail after SECONDS (default 20), naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 20))) value)
    (while (not (setq value (funcall predicate)))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))
    value))

(defun lpt-await-minibuffer ()
  "Wait until the next minibuffer was shown and left (<f12> in the tests)."
  (interactive)
  (unless (active-minibuffer-window)
    (let ((before lpt-exits))
      (lpt-wait (lambda () (> lpt-exits before)) "a question in the minibuffer" 30))))

(global-set-key (kbd "<f12>") #'lpt-await-minibuffer)

(defun lpt-press (&rest parts)
  "Type PARTS as the person would.
A string is `kbd' notation, a list holds literal text."
  (execute-kbd-macro
   (apply #'vconcat (mapcar (lambda (part) (if (consp part) (car part) (kbd part))) parts))))

(defun lpt-text (buffer)
  "The text of BUFFER."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun lpt-messages ()
  "The text of *Messages*."
  (lpt-text (messages-buffer)))

(defun lpt-clear-messages ()
  "Empty *Messages*: a test reads only its own messages."
  (with-current-buffer (messages-buffer)
    (let ((inhibit-read-only t))
      (erase-buffer))))

(defun lpt-named (suffix)
  "The sidecar documents ending in SUFFIX that messages named, oldest first."
  (let ((text (lpt-messages)) (start 0) paths)
    (while (string-match (concat "Open \\(" (regexp-quote lpt-documents)
                                 "[^ \n]*" (regexp-quote suffix) "\\)")
                         text start)
      (push (match-string 1 text) paths)
      (setq start (match-end 0)))
    (nreverse paths)))

(defun lpt-named-document (suffix &optional seen)
  "Wait for a message naming a sidecar document ending in SUFFIX, not in SEEN.
Return its path."
  (lpt-wait (lambda () (cl-find-if-not (lambda (path) (member path seen)) (lpt-named suffix)))
            (concat "a message naming a " suffix " document") 15))

(defun lpt-result (&optional seen)
  "Wait for a result document named by a message, not in SEEN; return its text."
  (let ((path (lpt-named-document "-result.md" seen)))
    (lpt-wait (lambda () (file-exists-p path)) "the result document's file")
    (lpt-file-text path)))

(defun lpt-file-text (path)
  "The text of the file PATH."
  (with-temp-buffer (insert-file-contents path) (buffer-string)))

(defun lpt-result-files ()
  "The result documents in the documents folder."
  (directory-files lpt-documents nil "-result\\.md\\'"))

;;;; The person's configuration (docs/editors.md)

(defun lpt-configure ()
  "Configure lsp-mode for the sidecar as docs/editors.md says.
The session is private: its file is in the test's HOME."
  (setq lsp-session-file (expand-file-name "lsp-session" lpt-home)
        lsp-client-packages nil
        lsp-enable-file-watchers nil
        lsp-restart 'ignore
        lsp-keep-workspace-alive nil
        lsp-enable-snippet nil
        lsp-completion-provider :none
        lsp-headerline-breadcrumb-enable nil
        lsp-modeline-code-actions-enable nil
        lsp-modeline-diagnostics-enable nil
        lsp-auto-execute-action nil)
  ;; The person's configuration starts here.
  (define-derived-mode mcpform-mode conf-unix-mode "MCP form"
    "A form of the MCP sidecar: one key: value line per field.")
  (add-to-list 'auto-mode-alist '("\\.mcpform\\'" . mcpform-mode))
  (add-to-list 'lsp-language-id-configuration '(mcpform-mode . "mcpform"))
  (setq lsp-lens-enable t lsp-diagnostics-provider :flymake)
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (list lpt-bin))
    :activation-fn (lsp-activate-on "python" "markdown" "mcpform")
    :server-id 'mcp-sidecar
    :add-on? t
    :multi-root t
    :initialization-options
    `(:servers (:demo (:command ,lpt-bin :args ["demo-server"])))))
  (dolist (hook '(python-mode-hook markdown-mode-hook mcpform-mode-hook))
    (add-hook hook #'lsp))
  ;; Once, what M-x lsp-workspace-folders-add does: the project, and the documents folder.
  (lsp-workspace-folders-add lpt-project)
  (lsp-workspace-folders-add lpt-documents))

;;;; The session

(defvar lpt-source nil
  "The buffer of the project's Python file.")

(defvar lpt-trust-question nil
  "The prompt of the minibuffer that asked to trust the demo.")

(defun lpt-workspace ()
  "The running sidecar's lsp-mode workspace."
  (cl-find-if (lambda (ws) (eq (lsp--client-server-id (lsp--workspace-client ws)) 'mcp-sidecar))
              (lsp--session-workspaces (lsp-session))))

(defun lpt-start ()
  "Open the project's file: lsp-mode starts the sidecar, which asks to trust demo.
Answer Trust; return when the demo offers its tools."
  (unless (and lpt-source (buffer-live-p lpt-source) (lpt-workspace))
    (should (and lpt-bin (file-executable-p lpt-bin)))
    (make-directory lpt-project t)
    (make-directory lpt-documents t)
    (set-file-modes lpt-documents #o700)
    (with-temp-file (expand-file-name "main.py" lpt-project)
      (insert "print('hello')\n"))
    (lpt-configure)
    (lpt-clear-messages)
    (setq lpt-minibuffers nil)
    (delete-other-windows)
    (lpt-press "C-x C-f" `(,(expand-file-name "main.py" lpt-project)) "RET"
               "<f12>" '("Trust") "RET")
    (setq lpt-source (get-file-buffer (expand-file-name "main.py" lpt-project)))
    (setq lpt-trust-question (car lpt-minibuffers))
    (should (eq 'initialized (lsp--workspace-status (lpt-workspace))))
    (lpt-wait (lambda () (lpt-tool-actions)) "the demo's tools in the code actions" 30)))

(defun lpt-tool-actions ()
  "The titles of the code actions at point in the project's file."
  (with-current-buffer lpt-source
    (mapcar #'lsp:code-action-title (lsp-code-actions-at-point))))

(defun lpt-open (path)
  "Open PATH as the person does (C-x C-f); return its buffer."
  (lpt-press "C-x C-f" `(,path) "RET")
  (let ((buffer (get-file-buffer path)))
    (should buffer)
    (with-current-buffer buffer
      (should (memq (lpt-workspace) (lsp-workspaces))))
    buffer))

(defun lpt-set-field (key value)
  "Write VALUE on the line of KEY in the current form."
  (goto-char (point-min))
  (should (re-search-forward (concat "^" (regexp-quote key) ":.*$") nil t))
  (replace-match (concat key ": " value) t t))

;;;; The tests

(defun lpt-code-action (title)
  "In the project's file, pick the code action TITLE, typed.
Return how many seconds lsp-mode took to run it."
  (switch-to-buffer lpt-source)
  (let ((started (float-time)))
    (lpt-press "M-x" '("lsp-execute-code-action") "RET" "<f12>" `(,title) "RET")
    (should (equal "Select code action: " (car lpt-minibuffers)))
    (- (float-time) started)))

(defun lpt-lenses ()
  "The titles of the code lenses shown in the current buffer."
  (let (titles)
    (dolist (overlay (overlays-in (point-min) (point-max)))
      (when (overlay-get overlay 'lsp-lens)
        (dolist (lens (overlay-get overlay 'lsp--metadata))
          (push (substring-no-properties lens) titles))))
    (sort titles #'string<)))

(defun lpt-lens (title)
  "Click the code lens TITLE of the current buffer (what its mouse-1 runs)."
  (let ((lens (cl-some (lambda (overlay)
                         (cl-find title (overlay-get overlay 'lsp--metadata)
                                  :test (lambda (title lens)
                                          (equal title (substring-no-properties lens)))))
                       (overlays-in (point-min) (point-max)))))
    (should lens)
    (call-interactively (get-text-property 0 'action lens))))

(defun lpt-progress ()
  "The progress tokens lsp-mode holds for the sidecar."
  (ht-keys (lsp--workspace-work-done-tokens (lpt-workspace))))

(defun lpt-mode-line ()
  "What lsp-mode shows of progress in the mode line of the project's file.
Batch Emacs has no frame to format a mode line: this is the entry lsp-mode
put in `global-mode-string', evaluated there."
  (let ((entry (cl-find-if (lambda (e) (equal e '(t (:eval (lsp--progress-status)))))
                           global-mode-string)))
    (or (and entry (with-current-buffer lpt-source (eval (cadr (cadr entry)) t)))
        "")))

(defun lpt-echo-by-lens (text)
  "Call echo from its code action and send TEXT with the form's lens Call echo.
Return the text of its result document."
  (let* ((seen (lpt-named "-result.md"))
         (forms (lpt-named ".mcpform"))
         (_ (lpt-code-action "MCP: call demo/echo…"))
         (path (lpt-named-document ".mcpform" forms))
         (form (lpt-open path)))
    (with-current-buffer form
      (lpt-wait #'lpt-lenses "the form's code lenses")
      (should (equal '("Call echo" "Cancel") (lpt-lenses)))
      (lpt-set-field "text" text)
      (should (buffer-modified-p))
      (lpt-lens "Call echo"))
    (prog1 (lpt-result seen)
      (lpt-wait (lambda () (not (file-exists-p path))) "the answered form to go")
      (kill-buffer form))))

(ert-deftest lsp-mode-plain-test-trust-is-asked-in-the-minibuffer ()
  "Opening the project starts the sidecar, which asks to trust demo: Trust is typed."
  (lpt-start)
  (should (string-search "Trust the MCP server" lpt-trust-question))
  (should (string-search "demo" lpt-trust-question))
  (should (eq 'initialized (lsp--workspace-status (lpt-workspace))))
  (should (member "MCP: call demo/add…" (lpt-tool-actions))))

(ert-deftest lsp-mode-plain-test-a-tool-from-a-code-action-with-its-form ()
  "MCP: call demo/add… from the code actions returns at once; its form goes on.
The form is named, opened, saved wrong (a diagnostic on its line), then
right: its result document.  The call's progress is in the mode line."
  (lpt-start)
  (lpt-clear-messages)
  (let* ((before (lpt-progress))
         (seconds (lpt-code-action "MCP: call demo/add…"))
         (path (lpt-named-document ".mcpform"))
         (form (lpt-open path))
         (progress (cl-set-difference (lpt-progress) before :test #'equal)))
    ;; lsp-mode waits for the reply to executeCommand (`lsp-request'): it came at once, well
    ;; before `lsp-response-timeout' (10 s), while the form waits for the person.
    (message "lpt: lsp-execute-code-action returned in %.3f s" seconds)
    (should (< seconds 2))
    (should-not (string-search "Timeout" (lpt-messages)))
    (should (string-suffix-p "-demo.mcpform" path))
    (should (= 1 (length progress)))
    (should (string-search "demo: add" (lpt-mode-line)))
    (with-current-buffer form
      (should (eq major-mode 'mcpform-mode))
      (should (string-search "Code actions: Call add, Cancel." (lpt-text form)))
      (should (bound-and-true-p flymake-mode))
      (lpt-wait #'lpt-lenses "the form's code lenses")
      (should (equal '("Call add" "Cancel") (lpt-lenses)))
      ;; Wrong: a is no number.
      (lpt-set-field "a" "two")
      (lpt-set-field "b" "40")
      (lpt-press "C-x C-s")
      (let* ((line (save-excursion (goto-char (point-min))
                                   (re-search-forward "^a:") (line-number-at-pos)))
             (diagnostic
              (lpt-wait (lambda ()
                          (cl-find-if (lambda (d)
                                        (= line (line-number-at-pos (flymake-diagnostic-beg d))))
                                      (flymake-diagnostics)))
                        "flymake's diagnostic on the line of a")))
        (should (string-search "number" (flymake-diagnostic-text diagnostic))))
      (should (file-exists-p path))
      (should-not (lpt-named "-result.md"))
      ;; Right: saved, it is sent.
      (lpt-set-field "a" "2")
      (lpt-press "C-x C-s"))
    (should (string-search "2 + 40 = 42" (lpt-result)))
    (lpt-wait (lambda () (not (file-exists-p path))) "the answered form to go")
    (lpt-wait (lambda () (not (member (car progress) (lpt-progress)))) "the progress to end")
    (should-not (string-search "demo: add" (lpt-mode-line)))
    (kill-buffer form)))

(ert-deftest lsp-mode-plain-test-a-lens-sends-the-form ()
  "The form's code lens Call echo sends what the buffer has, unsaved."
  (lpt-start)
  (lpt-clear-messages)
  (should (string-search "sent by a lens" (lpt-echo-by-lens "sent by a lens"))))

(ert-deftest lsp-mode-plain-test-choose-a-tool-by-name ()
  "mcp-sidecar.chooseTool, run by name with M-:, returns at once.
Which tool is a choice in the minibuffer, the arguments a form, sent with its
code action Call echo."
  (lpt-start)
  (lpt-clear-messages)
  (setq lpt-minibuffers nil)
  (switch-to-buffer lpt-source)
  (lpt-press "M-:" '("(lsp-workspace-command-execute \"mcp-sidecar.chooseTool\")") "RET"
             "<f12>" '("echo") "RET")
  (should (string-prefix-p "Which tool of demo?" (car lpt-minibuffers)))
  (should (equal "Eval: " (cadr lpt-minibuffers)))
  ;; What the command answered: M-: keeps it in `values'.
  (should (eq t (gethash "detached" (car values))))
  (let* ((path (lpt-named-document ".mcpform"))
         (form (lpt-open path)))
    (with-current-buffer form
      (lpt-set-field "text" "hello, lsp-mode")
      (lpt-press "M-x" '("lsp-execute-code-action") "RET" "<f12>" '("Call echo") "RET"))
    (should (string-search "hello, lsp-mode" (lpt-result)))
    (lpt-wait (lambda () (not (file-exists-p path))) "the answered form to go")
    (kill-buffer form)))

(ert-deftest lsp-mode-plain-test-a-call-cancelled-by-the-person ()
  "The form's code action Cancel, or closing the form, ends its call: no result.
The barrier is a later call's result: the cancelled ones named none."
  (lpt-start)
  (lpt-clear-messages)
  (let ((files (lpt-result-files))
        (path (progn (lpt-code-action "MCP: call demo/add…")
                     (lpt-named-document ".mcpform"))))
    ;; Cancel, the code action.
    (with-current-buffer (lpt-open path)
      (lpt-press "M-x" '("lsp-execute-code-action") "RET" "<f12>" '("Cancel") "RET")
      (lpt-wait (lambda () (not (file-exists-p path))) "the cancelled call's form to go")
      (kill-buffer))
    ;; Closing the form.
    (lpt-code-action "MCP: call demo/add…")
    (let ((closed (lpt-named-document ".mcpform" (list path))))
      (kill-buffer (lpt-open closed))
      (lpt-wait (lambda () (not (file-exists-p closed))) "the closed form's call to end"))
    (let ((barrier (lpt-echo-by-lens "after the cancels")))
      (should (string-search "after the cancels" barrier)))
    (should (= 1 (length (lpt-named "-result.md"))))
    (should (= 1 (length (cl-set-difference (lpt-result-files) files :test #'equal))))
    (lpt-wait (lambda () (null (lpt-progress))) "every call's progress to end")
    ;; A cancel is the person's own: no error message.
    (should-not (string-search "callTool" (lpt-messages)))))

(ert-deftest lsp-mode-plain-test-sampling-drafts-saved-to-send ()
  "analyze_flights: each sampling draft is a file saved to send it.
The request draft, edited and saved, goes on; the answer draft, written and
saved, is the tool's result document."
  (lpt-start)
  (lpt-clear-messages)
  (should (< (lpt-code-action "MCP: call demo/analyze_flights…") 2))
  (let* ((path (lpt-named-document "-request.md"))
         (request (lpt-open path)))
    (with-current-buffer request
      (should (eq major-mode 'markdown-mode))
      (goto-char (point-min))
      (should (search-forward "maxTokens: 400" nil t))
      (replace-match "maxTokens: 64" t t)
      (lpt-press "C-x C-s"))
    (let* ((path (lpt-named-document "-answer.md"))
           (answer (lpt-open path)))
      (with-current-buffer answer
        (should (string-search "model: manual" (lpt-text answer)))
        (goto-char (point-max))
        (insert "\nFlight 7 is the best value.\n")
        (lpt-press "C-x C-s"))
      (should (string-search "Flight 7 is the best value." (lpt-result)))
      (kill-buffer answer))
    (kill-buffer request)))

(provide 'lsp-mode-plain-test)
;;; lsp-mode-plain-test.el ends here
