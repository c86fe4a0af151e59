;;; mcp-sidecar-commands.el --- Tools, servers, trust, sign-in and the gateway  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The commands of the sidecar's tools and servers: `mcp-sidecar-call-tool',
;; `mcp-sidecar-tools', `mcp-sidecar-servers' (a table with trust, restart and sign-in keys),
;; `mcp-sidecar-trust', `mcp-sidecar-untrust', `mcp-sidecar-sign-in', `mcp-sidecar-sign-out',
;; `mcp-sidecar-restart-server', `mcp-sidecar-open-sampling-log',
;; `mcp-sidecar-gateway-environment' and the views of MCP Apps (`mcp-sidecar-app-open',
;; `mcp-sidecar-app-close').  Text the servers chose is inserted as text, never evaluated or
;; used as a format string.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'tabulated-list)
(require 'mcp-sidecar-client)

;;; Helpers

(defun mcp-sidecar--name (row)
  "The name of ROW as displayed: its cleaned label when the sidecar sent one."
  (or (mcp-sidecar--text (plist-get row :label)) (plist-get row :name) "?"))

(defun mcp-sidecar--pick-row (prompt rows line)
  "Pick one of ROWS with completion, asking PROMPT; return the row.
LINE is the function of a row's candidate."
  (let* ((lines (mcp-sidecar--unique (mapcar line rows)))
         (choice (completing-read prompt (mcp-sidecar--table lines) nil t)))
    (nth (or (cl-position choice lines :test #'equal)
             (user-error "Nothing picked"))
         rows)))

(defun mcp-sidecar--row-names (rows)
  "The names of ROWS (row plists with :name)."
  (delq nil (mapcar (lambda (row) (plist-get row :name)) rows)))

(defun mcp-sidecar--pretty-json (value)
  "VALUE (parsed JSON) as indented JSON text."
  (with-temp-buffer
    (insert (json-serialize value :null-object nil :false-object :json-false))
    (json-pretty-print-buffer)
    (buffer-string)))

(defun mcp-sidecar--show-buffer (name insert &optional mode)
  "Show the buffer NAME filled by the function INSERT.
Its major mode is MODE, by default `special-mode'."
  (with-current-buffer (get-buffer-create name)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (funcall (or mode #'special-mode))
      (funcall insert)
      (goto-char (point-min)))
    (pop-to-buffer (current-buffer))
    (current-buffer)))

(defun mcp-sidecar--report (what err)
  "Report the failure ERR of WHAT, or that the person cancelled it."
  (if (mcp-sidecar--cancelled-p err)
      (mcp-sidecar--say "%s: cancelled" what)
    (mcp-sidecar--say "%s failed: %s" what (mcp-sidecar--error-message err))))

;;; Tools

(defun mcp-sidecar--running-servers (conn)
  "The names of CONN's running servers.
While none is running and some are starting, wait for one."
  (let ((deadline (+ (float-time) mcp-sidecar-request-timeout)) running)
    (while (let ((rows (mcp-sidecar--list-servers conn)))
             (setq running (mcp-sidecar--row-names
                            (cl-remove-if-not (lambda (row) (equal (plist-get row :state) "running"))
                                              rows)))
             (and (null running) (< (float-time) deadline)
                  (cl-some (lambda (row) (equal (plist-get row :state) "starting")) rows)))
      (mcp-sidecar--say "waiting for the MCP servers to start…")
      (accept-process-output nil 0.2))
    running))

(defun mcp-sidecar--running-server (conn)
  "The server of CONN to call a tool of: the only one running, else one picked."
  (let ((running (mcp-sidecar--running-servers conn)))
    (cond ((null running) (user-error "No MCP server is running (M-x mcp-sidecar-servers)"))
          ((null (cdr running)) (car running))
          (t (completing-read "Call a tool of which MCP server? "
                              (mcp-sidecar--table running) nil t)))))

(defun mcp-sidecar--tool-line (row)
  "A tool ROW as a candidate: its name, (view), its title and description."
  (let ((title (mcp-sidecar--text (plist-get row :title)))
        (description (mcp-sidecar--text (plist-get row :description))))
    (concat (mcp-sidecar--name row)
            (if (plist-get (plist-get row :ui) :resourceUri) " (view)" "")
            (if (and title (not (equal title (plist-get row :name)))) (concat " — " title) "")
            (if description
                (concat " — " (car (split-string description "\n"))) ""))))

(defun mcp-sidecar--read-arguments (server tool)
  "Read the arguments of TOOL of SERVER as one JSON object, in the minibuffer."
  (let ((text "") value problem)
    (while (not value)
      (setq text (read-from-minibuffer
                  (concat (if problem (concat "⚠ " problem " · ") "")
                          server " › " tool " arguments (a JSON object): ")
                  text))
      (condition-case err
          (let ((parsed (json-parse-string (if (equal (string-trim text) "") "{}" text)
                                           :object-type 'hash-table
                                           :null-object nil :false-object :json-false)))
            (if (hash-table-p parsed)
                (setq value parsed)
              (setq problem "the arguments must be a JSON object, like {\"a\": 1}")))
        (json-parse-error (setq problem (concat "not valid JSON: " (error-message-string err))))))
    value))

(defun mcp-sidecar--read-call (typed)
  "Read the server and tool of `mcp-sidecar-call-tool'; with TYPED, the arguments."
  (let* ((conn (mcp-sidecar--ensure))
         (server (mcp-sidecar--running-server conn))
         (tools (append (mcp-sidecar--exec-sync conn 'list-tools (list :server server)) nil))
         (tool (if tools
                   (plist-get (mcp-sidecar--pick-row (concat "Call which tool of " server "? ")
                                                     tools #'mcp-sidecar--tool-line)
                              :name)
                 (user-error "%s has no tools" server))))
    (list server tool (and typed (mcp-sidecar--read-arguments server tool)))))

(defun mcp-sidecar--insert-tool-result (result)
  "Insert the `CallToolResult' RESULT: its content, then its structured content."
  (when (eq (plist-get result :isError) t)
    (insert "The tool reported an error:\n\n"))
  (cl-loop for block across (or (plist-get result :content) [])
           for first = t then nil
           do (unless first (insert "\n"))
           do (mcp-sidecar--insert-content block))
  (when (plist-member result :structuredContent)
    (insert "\n## Structured content\n\n"
            (mcp-sidecar--pretty-json (plist-get result :structuredContent)) "\n")))

(defun mcp-sidecar--insert-content (block)
  "Insert one content BLOCK of a tool result or prompt message."
  (let ((type (plist-get block :type)))
    (cond ((equal type "text") (insert (or (mcp-sidecar--text (plist-get block :text)) "")))
          ((member type '("image" "audio"))
           (insert "[" type " " (or (mcp-sidecar--text (plist-get block :mimeType)) "?") ", about "
                   (number-to-string (/ (* 3 (length (or (plist-get block :data) ""))) 4))
                   " bytes]"))
          ((equal type "resource_link")
           (insert "[resource link] " (or (mcp-sidecar--text (plist-get block :name)) "")
                   " <" (or (mcp-sidecar--text (plist-get block :uri)) "") ">"))
          ((equal type "resource")
           (let ((resource (plist-get block :resource)))
             (insert "[resource] <" (or (mcp-sidecar--text (plist-get resource :uri)) "") ">")
             (when (stringp (plist-get resource :text))
               (insert "\n" (plist-get resource :text)))))
          (t (insert (mcp-sidecar--pretty-json block))))
    (insert "\n")))

(defun mcp-sidecar--show-tool-result (server tool arguments result)
  "Show RESULT of calling TOOL of SERVER with ARGUMENTS in a buffer; return it."
  (mcp-sidecar--show-buffer
   (concat "*mcp result: " server "/" tool "*")
   (lambda ()
     (insert "# " server " › " tool "\n\n")
     (when arguments
       (insert "Arguments: " (json-serialize arguments :null-object nil
                                             :false-object :json-false)
               "\n\n"))
     (if (not result)
         (insert "No result (the call was dismissed).\n")
       (mcp-sidecar--insert-tool-result result)))))

;;;###autoload
(defun mcp-sidecar-call-tool (server tool &optional arguments)
  "Call TOOL of the MCP SERVER with ARGUMENTS and show its result in a buffer.
Interactively, pick the server (when more than one runs) and the tool with
completion; the sidecar then asks for the arguments from the tool's schema,
one question per argument and a review, or a JSON draft.  With a prefix
argument, type the arguments as one JSON object instead.  ARGUMENTS is a
hash table or plist; nil lets the sidecar ask."
  (interactive (mcp-sidecar--read-call current-prefix-arg))
  (let* ((conn (mcp-sidecar--ensure))
         (what (concat server " › " tool))
         ;; A task the call becomes is this call's: its result shows here, not announced.
         (call (mcp-sidecar--call-started conn server tool)))
    (mcp-sidecar--say "calling %s…" what)
    (mcp-sidecar--exec conn 'call-tool
                       (append (list :server server :tool tool)
                               (and arguments (list :arguments arguments)))
                       (lambda (result)
                         (mcp-sidecar--call-ended conn call)
                         (mcp-sidecar--show-tool-result server tool arguments result))
                       (lambda (err)
                         (mcp-sidecar--call-ended conn call)
                         (mcp-sidecar--report what err))
                       t)))

(defvar-local mcp-sidecar--tool-rows nil
  "The tools a tools buffer lists, by line: an alist of (LINE . ROW).")

(defun mcp-sidecar-tools-call ()
  "Call the tool on this line."
  (interactive)
  (let ((row (cdr (assq (line-number-at-pos) mcp-sidecar--tool-rows))))
    (unless row
      (user-error "No tool on this line"))
    (mcp-sidecar-call-tool (plist-get row :server) (plist-get row :name))))

(defvar mcp-sidecar-tools-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mcp-sidecar-tools-call)
    map)
  "Keys of the tools buffer.")

(define-derived-mode mcp-sidecar-tools-mode special-mode "MCP Tools"
  "The tools of the MCP servers: \\[mcp-sidecar-tools-call] calls the one on the line.")

;;;###autoload
(defun mcp-sidecar-tools (&optional server)
  "List the tools of SERVER, or of every running server.
RET on a tool calls it."
  (interactive)
  (let* ((conn (mcp-sidecar--ensure))
         (rows (append (mcp-sidecar--exec-sync conn 'list-tools
                                               (and server (list :server server)))
                       nil))
         lines current)
    (mcp-sidecar--show-buffer
     "*mcp tools*"
     (lambda ()
       (insert (if server (concat "Tools of " server) "MCP tools") " (RET calls the tool)\n")
       (dolist (row rows)
         (unless (equal (plist-get row :server) current)
           (setq current (plist-get row :server))
           (insert "\n" current "\n"))
         (insert "  " (mcp-sidecar--tool-line row) "\n")
         (push (cons (1- (line-number-at-pos)) row) lines))
       (unless rows
         (insert "\nNo tools (is a server running? M-x mcp-sidecar-servers)\n"))
       (setq mcp-sidecar--tool-rows lines))
     #'mcp-sidecar-tools-mode)))

;;; Servers

(defvar-local mcp-sidecar--servers-root nil
  "The project root of a servers buffer.")

(defun mcp-sidecar--server-entries (rows)
  "ROWS of listServers as `tabulated-list-entries'."
  (mapcar (lambda (row)
            (let ((message (or (mcp-sidecar--text (plist-get row :message)) ""))
                  (auth (plist-get row :auth)))
              (list (plist-get row :name)
                    (vector (mcp-sidecar--name row)
                            (or (plist-get row :state) "?")
                            (or (mcp-sidecar--text (plist-get row :protocolVersion)) "")
                            (or (mcp-sidecar--text (plist-get row :transport)) "")
                            (let ((n (plist-get row :toolCount)))
                              (if (numberp n) (number-to-string n) ""))
                            (or (mcp-sidecar--text (plist-get row :source)) "")
                            (concat (if auth (if (eq (plist-get auth :signedIn) t)
                                                 "signed in · " "not signed in · ")
                                      "")
                                    (string-replace "\n" " ⏎ " message))))))
          rows))

(defun mcp-sidecar--servers-refresh ()
  "Read the servers again (`tabulated-list-revert-hook')."
  (let ((conn (mcp-sidecar--ensure mcp-sidecar--servers-root)))
    (setq tabulated-list-entries (mcp-sidecar--server-entries (mcp-sidecar--list-servers conn)))))

(defun mcp-sidecar--server-at-point ()
  "The name of the server on this line of the servers buffer."
  (or (tabulated-list-get-id) (user-error "No server on this line")))

(defmacro mcp-sidecar--on-server-at-point (command)
  "A command running COMMAND on the server of the line."
  `(lambda ()
     (interactive)
     (,command (mcp-sidecar--server-at-point))))

(defvar mcp-sidecar-servers-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") (mcp-sidecar--on-server-at-point mcp-sidecar-tools))
    (define-key map "t" (mcp-sidecar--on-server-at-point mcp-sidecar-trust))
    (define-key map "u" (mcp-sidecar--on-server-at-point mcp-sidecar-untrust))
    (define-key map "r" (mcp-sidecar--on-server-at-point mcp-sidecar-restart-server))
    (define-key map "i" (mcp-sidecar--on-server-at-point mcp-sidecar-sign-in))
    (define-key map "o" (mcp-sidecar--on-server-at-point mcp-sidecar-sign-out))
    map)
  "Keys of the servers buffer.")

(define-derived-mode mcp-sidecar-servers-mode tabulated-list-mode "MCP Servers"
  "The MCP servers of a project and their states.
\\<mcp-sidecar-servers-mode-map>\\[revert-buffer] reads them again; on a server's line,
RET lists its tools, t trusts it, u stops trusting it, r restarts it,
i signs in and o signs out."
  (setq tabulated-list-format [("Name" 16 t) ("State" 11 t) ("Protocol" 11 nil)
                               ("Transport" 9 nil) ("Tools" 5 nil) ("Source" 28 nil)
                               ("Message" 0 nil)])
  (add-hook 'tabulated-list-revert-hook #'mcp-sidecar--servers-refresh nil t)
  (tabulated-list-init-header))

;;;###autoload
(defun mcp-sidecar-servers ()
  "List the MCP servers of the current project and their states."
  (interactive)
  (let ((root (mcp-sidecar--project-root)))
    (with-current-buffer (get-buffer-create (concat "*mcp servers: "
                                                    (abbreviate-file-name root) "*"))
      (mcp-sidecar-servers-mode)
      (setq mcp-sidecar--servers-root root)
      (mcp-sidecar--servers-refresh)
      (tabulated-list-print)
      (pop-to-buffer (current-buffer)))))

(defun mcp-sidecar--after-server-change ()
  "Refresh the servers buffers a command may have changed."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (derived-mode-p 'mcp-sidecar-servers-mode)
        (ignore-errors (revert-buffer))))))

(defun mcp-sidecar--server-names (conn predicate)
  "The names of CONN's servers whose rows satisfy PREDICATE."
  (mcp-sidecar--row-names (cl-remove-if-not predicate (mcp-sidecar--list-servers conn))))

(defun mcp-sidecar--read-server (prompt names &optional none)
  "Read one of NAMES with PROMPT; say NONE when there are none."
  (if names
      (completing-read prompt (mcp-sidecar--table names) nil t)
    (user-error "%s" (or none "no server"))))

;;;###autoload
(defun mcp-sidecar-restart-server (server)
  "Restart the MCP SERVER now (also one that gave up after crashing)."
  (interactive (list (mcp-sidecar--read-server
                      "Restart which MCP server? "
                      (mcp-sidecar--server-names (mcp-sidecar--ensure) #'identity))))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'restart-server (list :server server)
                     (lambda (_) (mcp-sidecar--say "restarting %s" server)
                       (mcp-sidecar--after-server-change))
                     (lambda (err) (mcp-sidecar--report (concat "restarting " server) err))))

(defun mcp-sidecar--user-scoped-p (row)
  "Whether ROW is a server of the person's own settings (never needs trust)."
  (and (equal (plist-get row :source) "editor settings")
       (assoc (plist-get row :name) mcp-sidecar-servers)))

;;;###autoload
(defun mcp-sidecar-trust (server)
  "Trust the workspace's MCP SERVER, for the sidecar to start it.
Interactively, the server waiting for trust, or one picked among them."
  (interactive
   (let ((names (mcp-sidecar--server-names
                 (mcp-sidecar--ensure)
                 (lambda (row) (and (equal (plist-get row :state) "needsTrust")
                                    (not (mcp-sidecar--user-scoped-p row)))))))
     (list (if (and names (null (cdr names)))
               (car names)
             (mcp-sidecar--read-server
              "Trust which MCP server? " names
              "no server waits for trust (servers from workspace files ask when they appear)")))))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'trust-server (list :server server)
                     (lambda (_) (mcp-sidecar--say "trusted %s" server)
                       (mcp-sidecar--after-server-change))
                     (lambda (err) (mcp-sidecar--report (concat "trusting " server) err))))

;;;###autoload
(defun mcp-sidecar-untrust (server)
  "Stop trusting the workspace's MCP SERVER: the sidecar stops it at once."
  (interactive
   (list (mcp-sidecar--read-server
          "Stop trusting which MCP server? "
          (mcp-sidecar--server-names
           (mcp-sidecar--ensure)
           (lambda (row) (and (not (equal (plist-get row :state) "needsTrust"))
                              (not (mcp-sidecar--user-scoped-p row)))))
          "no trusted server is defined by the workspace")))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'untrust-server (list :server server)
                     (lambda (_) (mcp-sidecar--say "%s is no longer trusted (stopped)" server)
                       (mcp-sidecar--after-server-change))
                     (lambda (err) (mcp-sidecar--report (concat "untrusting " server) err))))

(defun mcp-sidecar--http-servers (conn)
  "The names of CONN's http servers (only they sign in)."
  (mcp-sidecar--server-names conn (lambda (row) (equal (plist-get row :transport) "http"))))

;;;###autoload
(defun mcp-sidecar-sign-in (server)
  "Sign in to the http MCP SERVER now; the sidecar asks how to open the page."
  (interactive (list (mcp-sidecar--read-server "Sign in to which MCP server? "
                                               (mcp-sidecar--http-servers (mcp-sidecar--ensure))
                                               "no http server is configured")))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'sign-in (list :server server)
                     (lambda (row)
                       (mcp-sidecar--say "%s: %s" server (or (plist-get row :state) "?"))
                       (mcp-sidecar--after-server-change))
                     (lambda (err) (mcp-sidecar--report (concat "sign-in to " server) err))))

;;;###autoload
(defun mcp-sidecar-sign-out (server)
  "Sign out of the http MCP SERVER.
The grant is revoked where the server offers it, and forgotten."
  (interactive (list (mcp-sidecar--read-server "Sign out of which MCP server? "
                                               (mcp-sidecar--http-servers (mcp-sidecar--ensure))
                                               "no http server is configured")))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'sign-out (list :server server)
                     (lambda (result)
                       (mcp-sidecar--say "signed out of %s (%s)" server
                                (if (eq (plist-get result :revoked) t)
                                    "the grant was revoked"
                                  "the grant is forgotten; the server offers no revocation"))
                       (mcp-sidecar--after-server-change))
                     (lambda (err) (mcp-sidecar--report (concat "sign-out of " server) err))))

;;;###autoload
(defun mcp-sidecar-open-sampling-log ()
  "Open the sidecar's audit log of sampling requests."
  (interactive)
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'open-sampling-log nil
                     (lambda (result)
                       (unless (eq (plist-get result :opened) t)
                         (mcp-sidecar--say "could not open the sampling log %s"
                                  (or (plist-get result :path) ""))))))

;;; The gateway

(defun mcp-sidecar--mask (secret)
  "SECRET shortened for the screen: its first 4 and last 2 characters."
  (if (and (stringp secret) (> (length secret) 8))
      (concat (substring secret 0 4) "…" (substring secret -2))
    "…"))

(defun mcp-sidecar--gateway-snippets (program info)
  "Ready configurations for agents: a list of (TITLE . TEXT) for PROGRAM and INFO."
  (let* ((bin (json-serialize program))
         (json (concat "{\"mcpServers\": {\"workspace\": {\"command\": " bin
                       ", \"args\": [\"gateway\"]}}}"))
         (url (plist-get info :url)))
    (append
     (list (cons "Claude Code: .mcp.json in the project" json)
           (cons "Claude Code: command line"
                 (concat "claude mcp add workspace -- " (shell-quote-argument program) " gateway"))
           (cons "Codex CLI: ~/.codex/config.toml"
                 (concat "[mcp_servers.workspace]\ncommand = " bin "\nargs = [\"gateway\"]"))
           (cons "gemini-cli: .gemini/settings.json" json))
     (and (stringp url)
          (list (cons "Streamable HTTP, any MCP client (the secret changes each time the sidecar starts)"
                      (concat "URL: " url
                              (cl-loop for (key value) on (plist-get info :headers) by #'cddr
                                       concat (concat "\n" (substring (symbol-name key) 1)
                                                      ": " (format "%s" value))))))))))

(defun mcp-sidecar-gateway-copy ()
  "Copy the snippet at point to the kill ring (and the clipboard)."
  (interactive)
  (let ((text (get-text-property (point) 'mcp-sidecar-snippet)))
    (unless text
      (user-error "Put point on a snippet"))
    (kill-new text)
    (mcp-sidecar--say "copied")))

(defvar mcp-sidecar-gateway-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "w" #'mcp-sidecar-gateway-copy)
    map)
  "Keys of the gateway buffer.")

(define-derived-mode mcp-sidecar-gateway-mode special-mode "MCP Gateway"
  "The gateway's configurations for agents: \\[mcp-sidecar-gateway-copy] copies the one at point.")

;;;###autoload
(defun mcp-sidecar-gateway-environment ()
  "Show the gateway of this project: its environment, configurations for agents.
With `mcp-sidecar-mode' on, `shell', `eshell', `vterm' and `compile'
started in the project get that environment; agents there reach the
project's MCP servers (`mcp-sidecar gateway').  Return the environment
as NAME=VALUE strings."
  (interactive)
  (let* ((conn (mcp-sidecar--ensure))
         (info (mcp-sidecar--exec-sync conn 'gateway-info)))
    (mcp-sidecar--set-gateway conn info)
    (when (called-interactively-p 'interactive)
      (mcp-sidecar--show-buffer
       "*mcp gateway*"
       (lambda ()
         (insert "Agents in terminals: this project's MCP servers through the gateway\n"
                 "w copies the snippet at point · q closes\n\n"
                 (if mcp-sidecar-mode
                     "M-x shell, eshell, vterm and compile in this project get:\n"
                   "With mcp-sidecar-mode on, M-x shell, eshell, vterm and compile get:\n"))
         (pcase-dolist (`(,name . ,value) (mcp-sidecar--gateway conn))
           (insert "    " name "="
                   (if (string-suffix-p "TOKEN" name) (mcp-sidecar--mask value) value) "\n"))
         (pcase-dolist (`(,title . ,text)
                        (mcp-sidecar--gateway-snippets (mcp-sidecar--program) info))
           (insert "\n" title "\n\n")
           (let ((start (point)))
             (insert (mapconcat (lambda (line) (concat "    " line))
                                (split-string (if (string-prefix-p "Streamable" title)
                                                  (replace-regexp-in-string
                                                   "Bearer \\(.*\\)"
                                                   (lambda (m) (concat "Bearer "
                                                                       (mcp-sidecar--mask
                                                                        (substring m 7))))
                                                   text t t)
                                                text)
                                              "\n")
                                "\n")
                     "\n")
             (put-text-property start (point) 'mcp-sidecar-snippet text))))
       #'mcp-sidecar-gateway-mode))
    (mcp-sidecar--gateway-variables)))

;;; Views of MCP Apps

(defun mcp-sidecar--pick-view (conn prompt)
  "Pick one of CONN's open views with PROMPT; return its row."
  (let ((rows (append (mcp-sidecar--exec-sync conn 'list-apps) nil)))
    (unless rows
      (user-error "No app view is open (calling a tool that has one opens it)"))
    (mcp-sidecar--pick-row
     prompt rows
     (lambda (row)
       (concat (or (mcp-sidecar--text (plist-get row :title)) (plist-get row :view))
               (if (eq (plist-get row :initialized) t) " · running" " · the app has not started"))))))

;;;###autoload
(defun mcp-sidecar-app-open ()
  "Open an open view of an MCP App again, in the browser."
  (interactive)
  (let* ((conn (mcp-sidecar--ensure))
         (row (mcp-sidecar--pick-view conn "Open which app view in the browser? ")))
    (mcp-sidecar--exec conn 'open-app (list :view (plist-get row :view))
                       (lambda (result)
                         (unless (eq (plist-get result :opened) t)
                           (mcp-sidecar--say "the view was not opened"))))))

;;;###autoload
(defun mcp-sidecar-app-close ()
  "Close an open view of an MCP App; its state is gone."
  (interactive)
  (let* ((conn (mcp-sidecar--ensure))
         (row (mcp-sidecar--pick-view conn "Close which app view? ")))
    (mcp-sidecar--exec conn 'close-app (list :view (plist-get row :view))
                       (lambda (_) (mcp-sidecar--say "closed the view")))))

(provide 'mcp-sidecar-commands)
;;; mcp-sidecar-commands.el ends here
