;;; eglot-plain-test.el --- eglot without mcp-sidecar's package: plain LSP  -*- lexical-binding: t -*-

;; The real built sidecar (MCP_SIDECAR_BIN) and its demo server, driven by eglot (Debian's
;; elpa-eglot 1.9 on Emacs 28) with only the configuration a person writes (below), and typed
;; input: every minibuffer answer comes from a keyboard macro, read by eglot's own
;; `completing-read'.  eglot 1.9 declares neither window.showDocument nor
;; window.workDoneProgress, so the sidecar names each document it writes in a
;; window/showMessage ("Open <path>"), which the person opens with `find-file'.
;;
;; Run: editors/emacs/test/run-eglot.sh (private HOME and XDG folders, a timeout).

(require 'ert)
(require 'cl-lib)
(eval-and-compile
  (let ((eglot-dir (car (last (file-expand-wildcards
                               "/usr/share/emacs/site-lisp/elpa/eglot-*")))))
    (when eglot-dir (add-to-list 'load-path eglot-dir))))
(require 'eglot)

(defconst eglot-plain-test--bin
  (or (getenv "MCP_SIDECAR_BIN") (error "MCP_SIDECAR_BIN must name the built sidecar")))

;;;; The person's configuration (for docs/editors.md, with "mcp-sidecar" for the binary)

(defun eglot-plain-test--configure (bin)
  "What a person puts in their init file, BIN being the sidecar's command."
  ;; The servers as `initializationOptions'; eglot's `{}' settings right after connecting
  ;; leave them be.
  (add-to-list 'eglot-server-programs
               `(text-mode . (,bin :initializationOptions
                                   (:servers (:demo (:command ,bin
                                                     :args ["demo-server" "--era" "both"]))))))
  ;; The sidecar's question and draft documents: text-mode, like the files it serves.
  (add-to-list 'auto-mode-alist '("\\.mcpform\\'" . text-mode))
  (add-to-list 'auto-mode-alist '("/mcp-sidecar/documents/[^/]*\\.md\\'" . text-mode))
  ;; They live outside the project (<state>/mcp-sidecar/documents/<pid>-…): they belong to the
  ;; project of the eglot server whose sidecar has that process id.
  (add-hook 'project-find-functions #'eglot-plain-test--document-project))

(defun eglot-plain-test--document-project (_dir)
  "For a document of mcp-sidecar: the project of the eglot server that wrote it.
The document's name starts with the sidecar's process id."
  (when-let* ((file buffer-file-name)
              ((string-match "/mcp-sidecar/documents/\\([0-9]+\\)-[^/]*\\'" file))
              (pid (string-to-number (match-string 1 file))))
    (cl-loop for servers being the hash-values of eglot--servers-by-project
             thereis (cl-loop for server in servers
                              when (eql pid (process-id (jsonrpc--process server)))
                              return (eglot--project server)))))

;;;; Helpers

(defvar eglot-plain-test--project nil "The project folder (with notes.txt).")

(defvar eglot-plain-test--answered 0 "How many minibuffer reads ended.")
(add-hook 'minibuffer-exit-hook (lambda () (cl-incf eglot-plain-test--answered)))
(defvar eglot-plain-test--prompts nil "The prompts of the minibuffer reads, latest first.")
(add-hook 'minibuffer-setup-hook (lambda () (push (minibuffer-prompt) eglot-plain-test--prompts)))

(defun eglot-plain-test--wait (predicate what &optional timeout)
  "Run the event loop until PREDICATE returns non-nil, and return that.
Fail, naming WHAT, after TIMEOUT seconds (default 15)."
  (let ((deadline (+ (float-time) (or timeout 15))) value)
    (while (not (setq value (funcall predicate)))
      (when (> (float-time) deadline)
        (ert-fail (format "timed out waiting for %s" what)))
      (accept-process-output nil 0.05))
    value))

(defun eglot-plain-test-await-question ()
  "Wait (a command) until a question was answered in the minibuffer."
  (interactive)
  (let ((before eglot-plain-test--answered))
    (eglot-plain-test--wait (lambda () (> eglot-plain-test--answered before))
                            "a question in the minibuffer")))

(defun eglot-plain-test--type (keys)
  "Type KEYS (`kbd' syntax) as a keyboard macro."
  (execute-kbd-macro (kbd keys)))

(defun eglot-plain-test--messages ()
  (with-current-buffer (messages-buffer) (buffer-string)))

(defvar eglot-plain-test--opened nil "Paths already returned by `--wait-open'.")

(defun eglot-plain-test--nudge ()
  "Ask the sidecar something (its code actions in notes.txt): it answers.
jsonrpc 1.0.14 (Emacs 28) handles a synchronous request's reply by
throwing out of the process filter: messages the server sent in the
same read (the sidecar's next \"Open <path>\") stay unread until more
output arrives.  A person's next command does this."
  (with-current-buffer (get-file-buffer (expand-file-name "notes.txt" eglot-plain-test--project))
    (eglot-plain-test--action-titles)))

(defun eglot-plain-test--wait-open (regexp what)
  "Return the path of a new \"Open <path>\" message matching REGEXP.
WHAT names it when it does not come.  After a second without it, and
every second then, `eglot-plain-test--nudge'."
  (eglot-plain-test--wait
   (let ((nudge (+ (float-time) 1)))
     (lambda ()
       (when (> (float-time) nudge)
         (setq nudge (+ (float-time) 1))
         (eglot-plain-test--nudge))
       (let ((text (eglot-plain-test--messages)) (start 0) found)
         (while (and (not found)
                     (string-match "Open \\(/[^\n]+\\)" text start))
           (let ((path (match-string 1 text)))
             (setq start (match-end 0))
             (when (and (string-match-p regexp path)
                        (not (member path eglot-plain-test--opened)))
               (setq found path))))
         (when found (push found eglot-plain-test--opened))
         found)))
   what))

(defun eglot-plain-test--visit (path)
  "Visit PATH as a person would; eglot must manage it."
  (find-file path)
  (should (eglot-managed-p))
  (current-buffer))

(defun eglot-plain-test--field (key value)
  "Set the form field KEY to VALUE in the current buffer."
  (goto-char (point-min))
  (should (re-search-forward (format "^%s:.*$" (regexp-quote key)) nil t))
  (replace-match (format "%s: %s" key value) t t))

(defun eglot-plain-test--line-of (key)
  (save-excursion
    (goto-char (point-min))
    (re-search-forward (format "^%s:" (regexp-quote key)))
    (line-number-at-pos)))

(defun eglot-plain-test--start ()
  "Once: the project, eglot on its notes.txt, the demo server trusted."
  (unless (and eglot-plain-test--project
               (get-file-buffer (expand-file-name "notes.txt" eglot-plain-test--project))
               (with-current-buffer (get-file-buffer (expand-file-name "notes.txt" eglot-plain-test--project))
                 (eglot-managed-p)))
    (let ((project (file-name-as-directory (expand-file-name "project" (getenv "HOME")))))
      (make-directory (expand-file-name ".git" project) t)
      (with-temp-file (expand-file-name "notes.txt" project) (insert "Notes\n"))
      (setq eglot-plain-test--project project)
      (eglot-plain-test--configure eglot-plain-test--bin)
      (find-file (expand-file-name "notes.txt" project))
      (eglot-plain-test--type "M-x eglot RET")
      (should (eglot-managed-p))
      ;; eglot puts the first action in the minibuffer: the person erases it and types theirs.
      (eglot-plain-test--type "M-x eglot-plain-test-await-question RET C-a C-k Trust RET"))))

(defun eglot-plain-test--tools ()
  "Return the code actions' titles at point once they offer the demo's tools."
  (eglot-plain-test--wait
   (lambda ()
     (let ((titles (eglot-plain-test--action-titles)))
       (and (member "MCP: call demo/list_roots…" titles) titles)))
   "the demo tools as code actions" 20))

(defun eglot-plain-test--notes ()
  (eglot-plain-test--start)
  (set-buffer (get-file-buffer (expand-file-name "notes.txt" eglot-plain-test--project)))
  (switch-to-buffer (current-buffer)))

(defun eglot-plain-test--action-titles ()
  "The titles of the code actions at point (textDocument/codeAction)."
  (mapcar (lambda (a) (plist-get a :title))
          (jsonrpc-request (eglot--current-server-or-lose) :textDocument/codeAction
                           (list :textDocument (eglot--TextDocumentIdentifier)
                                 :range (list :start (eglot--pos-to-lsp-position (point))
                                              :end (eglot--pos-to-lsp-position (point)))
                                 :context (list :diagnostics [])))))

(defun eglot-plain-test--call (title)
  "Pick the code action TITLE at point, typed.
eglot waits for the command's reply: the sidecar answers a tool's code
action at once, and the call goes on (its documents, then its result)."
  (eglot-plain-test--type
   (concat "M-x eglot-code-actions RET "
           (mapconcat (lambda (c) (if (eq c ?\s) "SPC" (string c))) title " ")
           " RET")))

;;;; Tests

(ert-deftest eglot-plain-trust-choice-then-tools-as-code-actions ()
  "The demo server is trusted at eglot's completing-read; its tools become code actions."
  (eglot-plain-test--notes)
  (should (cl-some (lambda (p) (string-match-p "Trust the MCP server \"demo\"?" p))
                   eglot-plain-test--prompts))
  (should (member "MCP: call demo/echo…" (eglot-plain-test--tools))))

(ert-deftest eglot-plain-tool-without-arguments-from-a-code-action ()
  "list_roots from `eglot-code-actions' (typed): its result document is named, and holds it."
  (eglot-plain-test--notes)
  (eglot-plain-test--tools)
  (eglot-plain-test--type "M-x eglot-code-actions RET MCP: SPC call SPC demo/list_roots… RET")
  (let ((path (eglot-plain-test--wait-open "-result\\.md\\'" "the result document")))
    (with-current-buffer (eglot-plain-test--visit path)
      (should (string-match-p "list_roots" (buffer-string)))
      (should (string-match-p (regexp-quote (directory-file-name eglot-plain-test--project))
                              (buffer-string))))))

(ert-deftest eglot-plain-tool-arguments-as-a-form-with-diagnostics ()
  "add from a code action: its arguments are a form document, a wrong value a diagnostic."
  (eglot-plain-test--notes)
  (eglot-plain-test--tools)
  ;; eglot waits for the reply to executeCommand: it comes at once, well before eglot's
  ;; `jsonrpc-default-request-timeout', while the form waits for the person.
  (let ((started (float-time)))
    (eglot-plain-test--call "MCP: call demo/add…")
    (should (< (- (float-time) started) 5)))
  (let ((path (eglot-plain-test--wait-open "\\.mcpform\\'" "the arguments form")))
    (with-current-buffer (eglot-plain-test--visit path)
      (should (string-match-p "Code actions: Call add, Cancel" (buffer-string)))
      (eglot-plain-test--field "a" "two")
      (eglot-plain-test--field "b" "40")
      (eglot-plain-test--type "C-x C-s")
      (let ((diags (eglot-plain-test--wait (lambda () (flymake-diagnostics)) "diagnostics")))
        (should (= 1 (length diags)))
        (should (= (eglot-plain-test--line-of "a")
                   (line-number-at-pos (flymake-diagnostic-beg (car diags))))))
      (eglot-plain-test--field "a" "2")
      (eglot-plain-test--type "C-x C-s")))
  (let ((path (eglot-plain-test--wait-open "-result\\.md\\'" "the result document")))
    (with-current-buffer (eglot-plain-test--visit path)
      (should (string-match-p "2 \\+ 40 = 42" (buffer-string))))))

(ert-deftest eglot-plain-server-question-declined-by-a-code-action ()
  "book_trip: its arguments, then the server's form; Decline is a code action on it."
  (eglot-plain-test--notes)
  (eglot-plain-test--tools)
  (eglot-plain-test--call "MCP: call demo/book_trip…")
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "\\.mcpform\\'" "the arguments form"))
    (eglot-plain-test--field "destination" "Oslo")
    (eglot-plain-test--type "C-x C-s"))
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "\\.mcpform\\'" "the server's form"))
    (should (string-match-p "\\`# demo: Confirm your trip to Oslo" (buffer-string)))
    (should (equal '("Submit" "Decline" "Cancel") (eglot-plain-test--action-titles)))
    (eglot-plain-test--type "M-x eglot-code-actions RET Decline RET"))
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "-result\\.md\\'" "the result document"))
    (should (string-match-p "\"action\": \"decline\"" (buffer-string)))))

(ert-deftest eglot-plain-sampling-drafts-sent-by-a-code-action-and-by-saving ()
  "analyze_flights: the request draft sent with its Send code action, the answer by saving."
  (eglot-plain-test--notes)
  (eglot-plain-test--tools)
  (eglot-plain-test--call "MCP: call demo/analyze_flights…")
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "-demo-request\\.md\\'" "the request draft"))
    (should (string-match-p "EX517 Lisbon → Boston" (buffer-string)))
    (eglot-plain-test--type "M-x eglot-code-actions RET Send RET"))
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "-demo-answer\\.md\\'" "the answer draft"))
    (goto-char (point-min))
    (should (re-search-forward "^### assistant\n" nil t))
    (delete-region (point) (point-max))
    (insert "\nEX517 is the best value.\n")
    (eglot-plain-test--type "C-x C-s"))
  (with-current-buffer (eglot-plain-test--visit
                        (eglot-plain-test--wait-open "-result\\.md\\'" "the result document"))
    (should (string-match-p "EX517 is the best value\\." (buffer-string)))))

(provide 'eglot-plain-test)
;;; eglot-plain-test.el ends here
