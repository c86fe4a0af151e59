;;; mcp-sidecar-client.el --- The sidecar process and its LSP session  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; This file is not part of GNU Emacs.

;;; Commentary:

;; One sidecar per project root (`project-current', else `default-directory'): the process,
;; the LSP handshake (what this editor implements of the contract, docs/lsp-extensions.md),
;; the settings, the methods the sidecar calls (`mcp-sidecar--handlers'), the commands it
;; offers (`mcp-sidecar--commands'), the servers' states and tasks for the mode line and the
;; gateway's environment for terminals.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'url-util)
(require 'mcp-sidecar)
(require 'mcp-sidecar-ui)

(defconst mcp-sidecar--directory
  (let* ((file (or load-file-name buffer-file-name))
         (source (and (string-suffix-p ".elc" file) (substring file 0 -1))))
    ;; straight.el links the sources into its build directory and compiles beside them.
    (file-name-directory (file-truename (if (and source (file-exists-p source)) source file))))
  "The directory of this package's sources (links followed).")

;;; The contract

(defconst mcp-sidecar--editor-capabilities
  (list :inputBox t :quickPick t :editDraft t :clipboard t
        :languageModel :json-false
        ;; The settings carry serverScopes (see `mcp-sidecar--settings').
        :serverScopes t
        ;; An MCP App's view opens in the browser, on the page the sidecar sends.
        :openApp :json-false)
  "What this editor implements of the contract.
Sent as capabilities.experimental.mcpSidecar in `initialize'.")

(defconst mcp-sidecar--not-offered
  '(("mcp-sidecar/languageModel" . "Emacs has no language-model API of its own; sampling answers are written in the answer draft or come from the OpenAI-compatible provider of the sidecar")
    ("mcp-sidecar/openApp" . "Emacs cannot host a web page: an MCP App view opens in the browser, on the loopback page the sidecar sends with window/showDocument")
    ("mcp-sidecar.appRequest" . "the loopback page in the browser sends the messages of the app to the sidecar itself; no view runs inside Emacs"))
  "Contract methods and commands this package leaves out, each with the reason.
tests/it/contract_docs.rs checks that everything else has a handler in
`mcp-sidecar--handlers' or a command that sends it.")

(defconst mcp-sidecar--handlers
  '(("mcp-sidecar/inputBox" . mcp-sidecar--on-input-box)
    ("mcp-sidecar/quickPick" . mcp-sidecar--on-quick-pick)
    ("mcp-sidecar/editDraft" . mcp-sidecar--on-edit-draft)
    ("mcp-sidecar/cancelPrompt" . mcp-sidecar--on-cancel-prompt)
    ("mcp-sidecar/clipboard" . mcp-sidecar--on-clipboard)
    ("mcp-sidecar/serverStatus" . mcp-sidecar--on-server-status)
    ("mcp-sidecar/resourceUpdated" . mcp-sidecar--on-resource-updated)
    ("mcp-sidecar/closeApp" . mcp-sidecar--on-close-app)
    ("mcp-sidecar/taskStatus" . mcp-sidecar--on-task-status)
    ("window/showDocument" . mcp-sidecar--on-show-document)
    ("window/showMessage" . mcp-sidecar--on-show-message)
    ("window/logMessage" . mcp-sidecar--on-log-message)
    ("window/workDoneProgress/create" . ignore)
    ("$/progress" . mcp-sidecar--on-progress))
  "The sidecar's requests and notifications: method name to its handler.
A handler takes the connection and the params; a request's answer is what
it returns (a prompt answered later, see mcp-sidecar-ui.el).")

(defconst mcp-sidecar--commands
  '((list-servers . "mcp-sidecar.listServers")
    (list-tools . "mcp-sidecar.listTools")
    (call-tool . "mcp-sidecar.callTool")
    (restart-server . "mcp-sidecar.restartServer")
    (trust-server . "mcp-sidecar.trustServer")
    (untrust-server . "mcp-sidecar.untrustServer")
    (open-sampling-log . "mcp-sidecar.openSamplingLog")
    (sign-in . "mcp-sidecar.signIn")
    (sign-out . "mcp-sidecar.signOut")
    (list-resources . "mcp-sidecar.listResources")
    (list-resource-templates . "mcp-sidecar.listResourceTemplates")
    (read-resource . "mcp-sidecar.readResource")
    (subscribe-resource . "mcp-sidecar.subscribeResource")
    (unsubscribe-resource . "mcp-sidecar.unsubscribeResource")
    (list-prompts . "mcp-sidecar.listPrompts")
    (get-prompt . "mcp-sidecar.getPrompt")
    (complete . "mcp-sidecar.complete")
    (gateway-info . "mcp-sidecar.gatewayInfo")
    (expand-uri-template . "mcp-sidecar.expandUriTemplate")
    (list-apps . "mcp-sidecar.listApps")
    (open-app . "mcp-sidecar.openApp")
    (close-app . "mcp-sidecar.closeApp")
    (list-tasks . "mcp-sidecar.listTasks")
    (cancel-task . "mcp-sidecar.cancelTask")
    (list-skills . "mcp-sidecar.listSkills")
    (read-skill . "mcp-sidecar.readSkill"))
  "The sidecar's commands (workspace/executeCommand) this package sends, by key.")

;;; The connection

(defclass mcp-sidecar-connection (jsonrpc-process-connection)
  ((root :initarg :root :reader mcp-sidecar--root-of
         :documentation "The project root this sidecar serves.")
   (ready :initform nil :accessor mcp-sidecar--ready
          :documentation "Whether the LSP handshake finished.")
   (failure :initform nil :accessor mcp-sidecar--failure
            :documentation "Why the handshake failed, when it did.")
   (capabilities :initform nil :accessor mcp-sidecar--capabilities
                 :documentation "The sidecar's capabilities from `initialize'.")
   (servers :initform (make-hash-table :test #'equal) :reader mcp-sidecar--servers
            :documentation "The servers' latest rows (serverStatus, listServers), by name.")
   (progress :initform (make-hash-table :test #'equal) :reader mcp-sidecar--progress
             :documentation "The running calls' progress, by token: (TITLE MESSAGE TIME).")
   (gateway :initform nil :accessor mcp-sidecar--gateway
            :documentation "The gateway's environment, an alist of (NAME . VALUE).")
   (tasks :initform (make-hash-table :test #'equal) :reader mcp-sidecar--tasks
          :documentation "The tasks (taskStatus, listTasks), by `mcp-sidecar--task-key'.")
   (calls :initform nil :accessor mcp-sidecar--calls
          :documentation "The tool calls in flight: (CALL-KEY . TASK-KEY) cells.
CALL-KEY is the server and tool's `mcp-sidecar--task-key'; TASK-KEY is nil
until the task the call became is known.")
   (quiet :initform (make-hash-table :test #'equal) :reader mcp-sidecar--quiet
          :documentation "Tasks whose end is not announced: a call waits for them, the person
cancelled them, or it was announced already."))
  "A running sidecar and its LSP session, for one project root.")

(cl-defmethod jsonrpc-connection-send ((_conn mcp-sidecar-connection)
                                       &rest args &key id result &allow-other-keys)
  "Hold the reply to a request a person answers: RESULT is then a prompt.
The prompt learns the request's ID and sends its answer when it has one.
ARGS are the parts of the message; anything else goes out at once."
  (if (mcp-sidecar--prompt-p result)
      (progn (setf (mcp-sidecar--prompt-reply-id result) id)
             (mcp-sidecar--send-answer result))
    (cl-call-next-method)))

(defvar mcp-sidecar--connections (make-hash-table :test #'equal)
  "The running sidecars, by project root.")

(defvar mcp-sidecar--messages-buffer "*mcp-sidecar messages*"
  "The buffer of the sidecar's log messages (window/logMessage).")

(defun mcp-sidecar--project-root (&optional dir)
  "The root of DIR's project (default: `default-directory'), without a final slash."
  (let* ((default-directory (file-name-as-directory (expand-file-name (or dir default-directory))))
         (project (project-current nil)))
    (directory-file-name (expand-file-name (if project (project-root project) default-directory)))))

(defun mcp-sidecar--connection (&optional dir)
  "The running sidecar of DIR's project, or nil."
  (let ((conn (gethash (mcp-sidecar--project-root dir) mcp-sidecar--connections)))
    (and conn (jsonrpc-running-p conn) conn)))

(defun mcp-sidecar--all ()
  "Every running sidecar."
  (let (all)
    (maphash (lambda (_root conn) (when (jsonrpc-running-p conn) (push conn all)))
             mcp-sidecar--connections)
    all))

(defun mcp-sidecar--repo-root ()
  "The repository this package is part of (editors/emacs in it), or nil."
  (let ((root (expand-file-name "../.." mcp-sidecar--directory)))
    (and (file-exists-p (expand-file-name "Cargo.toml" root))
         (file-directory-p (expand-file-name "editors/emacs" root))
         root)))

(defun mcp-sidecar--program ()
  "The sidecar executable's file name; signal a `user-error' saying how to get one."
  (let ((repo (mcp-sidecar--repo-root)))
    (cond
     (mcp-sidecar-program
      (or (if (file-name-absolute-p mcp-sidecar-program)
              (and (file-executable-p mcp-sidecar-program) mcp-sidecar-program)
            (executable-find mcp-sidecar-program))
          (user-error "`mcp-sidecar-program' names %s, which is not an executable"
                      mcp-sidecar-program)))
     ((and repo (cl-find-if #'file-executable-p
                            (mapcar (lambda (dir) (expand-file-name dir repo))
                                    '("target/release/mcp-sidecar" "target/debug/mcp-sidecar")))))
     ((executable-find "mcp-sidecar"))
     (repo (user-error "Not built yet; run: cd %s && cargo build --release"
                       (shell-quote-argument repo)))
     (t (user-error "`mcp-sidecar' is not on `exec-path'; install it \
\(cargo install --path . in its repository) or set `mcp-sidecar-program'")))))

(defun mcp-sidecar--log-file ()
  "The sidecar's log file, or nil for standard error."
  (cond ((eq mcp-sidecar-log-file 'stderr) nil)
        (mcp-sidecar-log-file (expand-file-name mcp-sidecar-log-file))
        (t (expand-file-name "mcp-sidecar.log" user-emacs-directory))))

(defun mcp-sidecar--command-line ()
  "The command line to start the sidecar with."
  (let ((log-file (mcp-sidecar--log-file)))
    (when log-file
      (make-directory (file-name-directory log-file) t))
    (append (list (mcp-sidecar--program))
            (and log-file (list "--log-file" log-file))
            (and mcp-sidecar-log-level (list "--log-level" mcp-sidecar-log-level)))))

(defun mcp-sidecar--uri (path)
  "The file: URI of the directory or file PATH."
  (concat "file://" (url-hexify-string (encode-coding-string (expand-file-name path) 'utf-8)
                                       url-path-allowed-chars)))

(defun mcp-sidecar--json (value)
  "VALUE for `json-serialize': lists of atoms become arrays, plists stay objects."
  (cond ((and (consp value) (keywordp (car value)))
         (cl-loop for (key val) on value by #'cddr
                  append (list key (mcp-sidecar--json val))))
        ((and (consp value) (proper-list-p value))
         (vconcat (mapcar #'mcp-sidecar--json value)))
        ((vectorp value) (vconcat (mapcar #'mcp-sidecar--json value)))
        (t value)))

(defun mcp-sidecar--settings ()
  "The settings sent to the sidecar: `mcp-sidecar-settings' with the servers.
Every server of the variable `mcp-sidecar-servers' is the person's own
\(serverScopes \"user\") unless the settings' own serverScopes say otherwise."
  (let* ((settings (mcp-sidecar--json mcp-sidecar-settings))
         (servers (plist-get settings :servers))
         (scopes (plist-get settings :serverScopes)))
    (pcase-dolist (`(,name . ,definition) mcp-sidecar-servers)
      (let ((key (intern (concat ":" name))))
        (setq servers (plist-put servers key (mcp-sidecar--json definition)))
        (unless (plist-member scopes key)
          (setq scopes (plist-put scopes key "user")))))
    (when servers
      (setq settings (plist-put settings :servers servers)))
    (when scopes
      (setq settings (plist-put settings :serverScopes scopes)))
    (or settings (make-hash-table))))

(defun mcp-sidecar--folders (root)
  "The workspace folders of the sidecar of ROOT, as LSP WorkspaceFolders."
  (vconcat (mapcar (lambda (dir)
                     (let ((dir (directory-file-name (expand-file-name dir))))
                       (list :uri (mcp-sidecar--uri dir) :name dir)))
                   (delete-dups (cons root (mapcar (lambda (d) (directory-file-name
                                                                (expand-file-name d)))
                                                   mcp-sidecar-workspace-folders))))))

(defun mcp-sidecar--initialize-params (root)
  "The params of `initialize' for the sidecar of ROOT."
  (list :processId (emacs-pid)
        :clientInfo (list :name "Emacs" :version emacs-version)
        :rootUri (mcp-sidecar--uri root)
        :rootPath root
        :workspaceFolders (mcp-sidecar--folders root)
        :capabilities (list :workspace (list :workspaceFolders t)
                            :window (list :showDocument (list :support t)
                                          :workDoneProgress t)
                            :experimental (list :mcpSidecar mcp-sidecar--editor-capabilities))
        :initializationOptions (mcp-sidecar--settings)))

(defun mcp-sidecar--environment ()
  "The sidecar's environment: Emacs's, without another gateway's variables.
An empty value is unset for `mcp-sidecar gateway'."
  (append (cl-loop for name in '("MCP_SIDECAR_GATEWAY" "MCP_SIDECAR_GATEWAY_TOKEN")
                   when (getenv name) collect (concat name "="))
          process-environment))

(defun mcp-sidecar--start (root)
  "Start the sidecar of ROOT and its handshake; return the connection."
  (when (file-remote-p root)
    (user-error "Remote projects are not supported (%s)" root))
  (let* ((command (mcp-sidecar--command-line))
         (name (concat "mcp-sidecar " (abbreviate-file-name root)))
         (default-directory (file-name-as-directory root))
         (process-environment (mcp-sidecar--environment))
         (conn (make-instance
                'mcp-sidecar-connection
                :name name :root root
                :events-buffer-scrollback-size mcp-sidecar-events-buffer-size
                :request-dispatcher #'mcp-sidecar--dispatch
                :notification-dispatcher #'mcp-sidecar--dispatch
                :on-shutdown #'mcp-sidecar--on-shutdown
                :process (lambda ()
                           (make-process :name name :command command
                                         :connection-type 'pipe
                                         :coding 'utf-8-emacs-unix
                                         :noquery t
                                         :stderr (get-buffer-create
                                                  (concat "*" name " stderr*")))))))
    (puthash root conn mcp-sidecar--connections)
    (jsonrpc-async-request
     conn :initialize (mcp-sidecar--initialize-params root)
     :timeout mcp-sidecar-request-timeout
     :success-fn (lambda (result)
                   (setf (mcp-sidecar--capabilities conn) (plist-get result :capabilities))
                   (jsonrpc-notify conn :initialized (make-hash-table))
                   (setf (mcp-sidecar--ready conn) t))
     :error-fn (lambda (err)
                 (setf (mcp-sidecar--failure conn)
                       (or (plist-get err :message) "the handshake failed")))
     :timeout-fn (lambda ()
                   (setf (mcp-sidecar--failure conn) "the handshake timed out")))
    conn))

(defun mcp-sidecar--ensure (&optional dir)
  "The initialized sidecar of DIR's project, started when needed.
Waits for its handshake; signals a `user-error' when it cannot start."
  (let* ((root (mcp-sidecar--project-root dir))
         (conn (or (mcp-sidecar--connection root) (mcp-sidecar--start root)))
         (deadline (+ (float-time) mcp-sidecar-request-timeout)))
    (while (not (or (mcp-sidecar--ready conn) (mcp-sidecar--failure conn)
                    (not (jsonrpc-running-p conn)) (> (float-time) deadline)))
      (accept-process-output nil 0.05))
    (cond ((mcp-sidecar--ready conn) conn)
          ((mcp-sidecar--failure conn)
           (user-error "Could not start: %s" (mcp-sidecar--failure conn)))
          ((not (jsonrpc-running-p conn))
           (user-error "The sidecar exited during start-up (M-x mcp-sidecar-open-log)"))
          (t (user-error "The sidecar did not finish its start-up")))))

(defun mcp-sidecar--on-shutdown (conn)
  "Forget CONN, whose process ended."
  (when (eq (gethash (mcp-sidecar--root-of conn) mcp-sidecar--connections) conn)
    (remhash (mcp-sidecar--root-of conn) mcp-sidecar--connections))
  (mcp-sidecar--cancel-all conn)
  (setf (mcp-sidecar--gateway conn) nil)
  (force-mode-line-update t))

(defun mcp-sidecar--stop (conn)
  "End the sidecar CONN: shutdown and exit, then wait a little for it to go.
What is left is killed, with its buffers."
  (when (jsonrpc-running-p conn)
    (ignore-errors
      (jsonrpc-async-request conn :shutdown nil :timeout 2
                             :success-fn (lambda (_) (ignore-errors
                                                       (jsonrpc-notify conn :exit nil)))))
    (let ((deadline (+ (float-time) 3)))
      (while (and (jsonrpc-running-p conn) (< (float-time) deadline))
        (accept-process-output nil 0.05)))
    (when (jsonrpc-running-p conn)
      (ignore-errors (process-send-eof (jsonrpc--process conn)))
      (let ((deadline (+ (float-time) 2)))
        (while (and (jsonrpc-running-p conn) (< (float-time) deadline))
          (accept-process-output nil 0.05)))))
  (let ((process (jsonrpc--process conn))
        (stderr (jsonrpc-stderr-buffer conn)))
    (when (process-live-p process)
      (delete-process process))
    (mcp-sidecar--on-shutdown conn)
    (dolist (buffer (list (process-buffer process) stderr))
      (when (buffer-live-p buffer)
        (kill-buffer buffer)))))

(defun mcp-sidecar--stop-all ()
  "End every sidecar (`kill-emacs-hook').
The questions they asked stay as they are: Emacs is on its way out."
  (let ((mcp-sidecar--exiting t))
    (mapc #'mcp-sidecar--stop (mcp-sidecar--all))))

(add-hook 'kill-emacs-hook #'mcp-sidecar--stop-all)

;;;###autoload
(defun mcp-sidecar-start (&optional dir)
  "Start the sidecar of the current project, or of DIR's, if not running."
  (interactive)
  (let ((conn (mcp-sidecar--ensure dir)))
    (when (called-interactively-p 'interactive)
      (mcp-sidecar--say "running for %s" (mcp-sidecar--root-of conn)))
    conn))

;;;###autoload
(defun mcp-sidecar-stop (&optional all)
  "Stop the sidecar of the current project; with prefix ALL, every sidecar."
  (interactive "P")
  (if all
      (mcp-sidecar--stop-all)
    (let ((conn (mcp-sidecar--connection)))
      (if conn
          (mcp-sidecar--stop conn)
        (mcp-sidecar--say "no sidecar runs for this project")))))

;;;###autoload
(defun mcp-sidecar-reconfigure ()
  "Send the current settings and servers to every running sidecar."
  (interactive)
  (dolist (conn (mcp-sidecar--all))
    (jsonrpc-notify conn 'workspace/didChangeConfiguration
                    (list :settings (mcp-sidecar--settings)))))

;;;###autoload
(defun mcp-sidecar-open-log ()
  "Show the sidecar's own log."
  (interactive)
  (let ((file (mcp-sidecar--log-file))
        (conn (mcp-sidecar--connection)))
    (cond (file
           (unless (file-exists-p file)
             (user-error "No log yet at %s" file))
           (with-current-buffer (find-file-noselect file)
             (read-only-mode 1)
             (auto-revert-tail-mode 1)
             (pop-to-buffer (current-buffer))
             (goto-char (point-max))))
          (conn (pop-to-buffer (jsonrpc-stderr-buffer conn)))
          (t (user-error "No sidecar runs for this project")))))

;;; Commands

(defun mcp-sidecar--error-message (err)
  "The JSON-RPC error ERR as one sentence, its data.kind in brackets."
  (let ((message (or (plist-get err :message) "error"))
        (kind (plist-get (plist-get err :data) :kind)))
    (if (stringp kind) (concat message " [" kind "]") message)))

(defun mcp-sidecar--cancelled-p (err)
  "Whether ERR is the error of a command the person cancelled."
  (or (eql (plist-get err :code) -32800)
      (equal (plist-get (plist-get err :data) :kind) "cancelled")))

(defun mcp-sidecar--exec (conn key argument then &optional else progress)
  "Run the sidecar command KEY (see `mcp-sidecar--commands') on CONN with ARGUMENT.
THEN is called with the result; ELSE with the error plist (default:
report it).  Commands may wait on people: there is no timeout.  With
PROGRESS, the server's progress shows in the mode line."
  (let ((command (or (cdr (assq key mcp-sidecar--commands))
                     (error "Unknown sidecar command %s" key)))
        (params nil))
    (setq params (list :command command :arguments (vector (or argument (make-hash-table)))))
    (when progress
      (setq params (plist-put params :workDoneToken
                              (concat "mcp-sidecar-" (number-to-string (random 1000000000))))))
    (let ((root (file-name-as-directory (mcp-sidecar--root-of conn)))
          (else (or else (lambda (err) (mcp-sidecar--say "%s" (mcp-sidecar--error-message err))))))
      ;; The buffers the callbacks make belong to the project.
      (jsonrpc-async-request
       conn 'workspace/executeCommand params
       :timeout nil
       :success-fn (lambda (result) (let ((default-directory root)) (funcall then result)))
       :error-fn (lambda (err) (let ((default-directory root)) (funcall else err)))))))

(defun mcp-sidecar--exec-sync (conn key &optional argument)
  "Run the sidecar command KEY on CONN with ARGUMENT and return its result.
For commands no person answers; waits `mcp-sidecar-request-timeout'
seconds at most and signals a `user-error' with the sidecar's message."
  (let ((done nil) result failure
        (deadline (+ (float-time) mcp-sidecar-request-timeout)))
    (mcp-sidecar--exec conn key argument
                       (lambda (value) (setq result value done t))
                       (lambda (err) (setq failure err done t)))
    (while (and (not done) (jsonrpc-running-p conn) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (cond (failure (user-error "%s" (mcp-sidecar--error-message failure)))
          (done result)
          ((not (jsonrpc-running-p conn)) (user-error "The sidecar has stopped"))
          (t (user-error "No answer from the sidecar")))))

(defun mcp-sidecar--list-servers (conn)
  "The listServers rows of CONN (kept for the mode line)."
  (let ((rows (append (mcp-sidecar--exec-sync conn 'list-servers) nil))
        (table (mcp-sidecar--servers conn)))
    (clrhash table)
    (dolist (row rows)
      (when (stringp (plist-get row :name))
        (puthash (plist-get row :name) row table)))
    rows))

;;; Handlers of what the sidecar sends

(defun mcp-sidecar--dispatch (conn method params)
  "Run the handler of METHOD (a symbol) from CONN with PARAMS."
  (let ((handler (cdr (assoc (symbol-name method) mcp-sidecar--handlers))))
    (if handler
        (funcall handler conn params)
      (jsonrpc-error :code -32601 :message "Emacs does not handle this method"))))

(defun mcp-sidecar--on-clipboard (_conn params)
  "Put the text of PARAMS on the clipboard (and the kill ring)."
  (let ((text (plist-get params :text)))
    (when (stringp text)
      (kill-new text)
      (mcp-sidecar--say "copied to the clipboard: %s" text))))

(defun mcp-sidecar--on-server-status (conn params)
  "Keep the server state in PARAMS of CONN."
  (let ((name (plist-get params :name)))
    (when (stringp name)
      (let* ((table (mcp-sidecar--servers conn))
             (previous (gethash name table))
             (row (copy-sequence params)))
        ;; serverStatus has no transport: keep what a listServers row said.
        (when (and previous (not (plist-get row :transport)))
          (setq row (plist-put row :transport (plist-get previous :transport))))
        (puthash name row table)
        (force-mode-line-update t)))))

(defun mcp-sidecar--on-resource-updated (conn params)
  "Read the resource PARAMS name again in its buffers, for CONN."
  (when (fboundp 'mcp-sidecar--resource-updated)
    (funcall 'mcp-sidecar--resource-updated conn params)))

(defun mcp-sidecar--on-close-app (_conn params)
  "Say that the view of PARAMS was closed."
  (let ((reason (plist-get params :reason)))
    (mcp-sidecar--say "the view %s was closed: %s"
             (or (plist-get params :view) "?")
             (if (stringp reason) reason "closed"))))

(defun mcp-sidecar--web-address-p (uri)
  "Whether URI may be opened outside Emacs: http and https only."
  (and (stringp uri) (string-match-p "\\`[hH][tT][tT][pP][sS]?:" uri)))

(defun mcp-sidecar--on-show-document (_conn params)
  "Open the document of PARAMS: a web address in the browser, a file in Emacs."
  (let ((uri (plist-get params :uri)))
    (cond
     ((mcp-sidecar--true-p (plist-get params :external))
      (if (not (mcp-sidecar--web-address-p uri))
          (progn (mcp-sidecar--say "refused to open an address that is not http or https")
                 (list :success :json-false))
        (condition-case err
            (progn (browse-url uri) (list :success t))
          (error (mcp-sidecar--say "could not open a browser (%s); open this address yourself: %s"
                          (error-message-string err) uri)
                 (list :success :json-false)))))
     ((and (stringp uri) (string-prefix-p "file://" uri))
      (let ((file (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)))
        (run-at-time 0 nil (lambda ()
                             (when (file-exists-p file)
                               (pop-to-buffer (find-file-noselect file)))))
        (list :success (if (file-exists-p file) t :json-false))))
     (t (list :success :json-false)))))

(defun mcp-sidecar--on-show-message (_conn params)
  "Show the message of PARAMS."
  (let ((text (plist-get params :message)))
    (when (stringp text)
      (mcp-sidecar--say "%s" text)
      (mcp-sidecar--append-message text))))

(defun mcp-sidecar--append-message (text)
  "Append TEXT as a line to `mcp-sidecar--messages-buffer'."
  (with-current-buffer (get-buffer-create mcp-sidecar--messages-buffer)
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (insert text "\n")
      (when (> (count-lines (point-min) (point-max)) 2000)
        (goto-char (point-min))
        (forward-line 500)
        (delete-region (point-min) (point))))
    (setq buffer-read-only t)))

(defun mcp-sidecar--on-log-message (conn params)
  "Keep the log line of PARAMS from CONN; learn the gateway's environment from it."
  (let ((text (plist-get params :message)))
    (when (stringp text)
      (mcp-sidecar--append-message text)
      (cond ((string-prefix-p "gateway: serving agents at " text)
             (mcp-sidecar--exec conn 'gateway-info nil
                                (lambda (info) (mcp-sidecar--set-gateway conn info))
                                (lambda (_err) (setf (mcp-sidecar--gateway conn) nil))))
            ((string-prefix-p "gateway: off" text)
             (setf (mcp-sidecar--gateway conn) nil))))))

(defun mcp-sidecar--on-progress (conn params)
  "Keep the progress of PARAMS for the mode line of CONN."
  (let* ((token (format "%s" (plist-get params :token)))
         (value (plist-get params :value))
         (kind (plist-get value :kind))
         (table (mcp-sidecar--progress conn)))
    (pcase kind
      ("begin" (puthash token (list (or (plist-get value :title) "") nil (float-time)) table))
      ("report" (let ((entry (gethash token table)))
                  (when (and entry (stringp (plist-get value :message)))
                    (puthash token (list (car entry) (plist-get value :message) (float-time))
                             table))))
      ("end" (remhash token table)))
    (force-mode-line-update t)))

;;; Tasks

(defun mcp-sidecar--task-key (server id)
  "The key of the task ID of SERVER."
  (format "%s\n%s" server id))

(defun mcp-sidecar--task-running-p (task)
  "Whether TASK (a taskStatus plist) is still running."
  (member (plist-get task :status) '("working" "input_required")))

(defun mcp-sidecar--call-started (conn server tool)
  "Note a call of TOOL of SERVER on CONN; return its cell.
The task the call becomes is that call's: its end is not announced.
Pass the cell to `mcp-sidecar--call-ended' when the call has its answer."
  (let ((cell (cons (mcp-sidecar--task-key server tool) nil)))
    (push cell (mcp-sidecar--calls conn))
    cell))

(defun mcp-sidecar--call-ended (conn cell)
  "The call CELL on CONN has its answer."
  (setf (mcp-sidecar--calls conn) (delq cell (mcp-sidecar--calls conn))))

(defun mcp-sidecar--task-ended-message (task)
  "What the ended TASK came to, in one line."
  (let ((what (concat "task " (plist-get task :server) " › "
                      (format "%s" (plist-get task :tool))))
        (why (mcp-sidecar--text (plist-get task :error))))
    (pcase (plist-get task :status)
      ("completed" (concat what " completed"
                           (if (eq (plist-get (plist-get task :result) :isError) t)
                               " (the tool reported an error)" "")))
      ("cancelled" (concat what " was cancelled"))
      ("lost" (concat what " is lost: " (or why "the server no longer knows it")))
      (status (concat what " " (format "%s" status) (if why (concat ": " why) ""))))))

(defun mcp-sidecar--on-task-status (conn params)
  "Keep the task of PARAMS from CONN; announce its end when no call waits for it."
  (let ((server (plist-get params :server))
        (id (plist-get params :taskId)))
    (when (and (stringp server) id)
      (let* ((key (mcp-sidecar--task-key server id))
             (tasks (mcp-sidecar--tasks conn))
             (quiet (mcp-sidecar--quiet conn))
             (known (gethash key tasks)))
        ;; A task that ended never runs again: a report older than its end changes nothing.
        (when (and known (not (mcp-sidecar--task-running-p known))
                   (mcp-sidecar--task-running-p params))
          (setq params known))
        (unless (or known (gethash key quiet))
          (let ((call (cl-find-if (lambda (cell)
                                    (and (null (cdr cell))
                                         (equal (car cell) (mcp-sidecar--task-key
                                                            server (plist-get params :tool)))))
                                  (mcp-sidecar--calls conn))))
            (when call
              (setcdr call key)
              (puthash key t quiet))))
        (puthash key params tasks)
        (unless (or (mcp-sidecar--task-running-p params) (gethash key quiet))
          (puthash key t quiet)
          (mcp-sidecar--say "%s (M-x mcp-sidecar-tasks shows it)"
                            (mcp-sidecar--task-ended-message params)))
        (force-mode-line-update t)))))

(defun mcp-sidecar--running-tasks (conn)
  "How many tasks of CONN are running."
  (let ((n 0))
    (maphash (lambda (_key task) (when (mcp-sidecar--task-running-p task) (setq n (1+ n))))
             (mcp-sidecar--tasks conn))
    n))

;;; The mode line and the gateway

(defconst mcp-sidecar--marks
  '(("failed" . "✗") ("starting" . "…") ("needsTrust" . "?") ("needsAuth" . "⚿")
    ("stopped" . "-"))
  "The mode line's mark of each state a server may be in, besides running.")

(defun mcp-sidecar--status-text ()
  "The state of every sidecar's servers, for the mode line.
For example \"MCP 2/3 ✗1 ✎1 ⧗1 · demo: count_down 2 left\"; empty when no
sidecar has a server."
  (let ((counts (make-hash-table :test #'equal)) (total 0) (tasks 0) latest)
    (dolist (conn (mcp-sidecar--all))
      (setq tasks (+ tasks (mcp-sidecar--running-tasks conn)))
      (maphash (lambda (_name row)
                 (setq total (1+ total))
                 (puthash (plist-get row :state) (1+ (gethash (plist-get row :state) counts 0))
                          counts))
               (mcp-sidecar--servers conn))
      (maphash (lambda (_token entry)
                 (when (or (null latest) (> (nth 2 entry) (nth 2 latest)))
                   (setq latest entry)))
               (mcp-sidecar--progress conn)))
    (if (= total 0)
        ""
      (let ((asking (mcp-sidecar--asking)))
        (concat "MCP " (number-to-string (gethash "running" counts 0)) "/"
                (number-to-string total)
                (mapconcat (lambda (mark)
                             (let ((n (gethash (car mark) counts)))
                               (if n (concat " " (cdr mark) (number-to-string n)) "")))
                           mcp-sidecar--marks "")
                (if (> asking 0) (concat " ✎" (number-to-string asking)) "")
                (if (> tasks 0) (concat " ⧗" (number-to-string tasks)) "")
                (if latest
                    (concat " · " (car latest) (if (nth 1 latest) (concat " " (nth 1 latest)) ""))
                  ""))))))

(defun mcp-sidecar--set-gateway (conn info)
  "Keep the environment of the gatewayInfo result INFO for CONN."
  (let ((env (plist-get info :env)) variables)
    (cl-loop for (key value) on env by #'cddr
             for name = (substring (symbol-name key) 1)
             when (and (stringp value) (string-match-p "\\`[A-Za-z0-9_]+\\'" name))
             do (push (cons name value) variables))
    (setf (mcp-sidecar--gateway conn) (nreverse variables))))

(defun mcp-sidecar--gateway-variables (&optional dir)
  "The gateway's variables for a process in DIR, as NAME=VALUE strings.
Those of the sidecar of DIR's project, else of the only sidecar running;
none when there are several (`mcp-sidecar gateway' then finds the right
one from the folder it runs in)."
  (let* ((all (mcp-sidecar--all))
         (conn (and all (or (mcp-sidecar--connection dir)
                            (and (= (length all) 1) (car all))))))
    (and conn
         (mapcar (lambda (pair) (concat (car pair) "=" (cdr pair)))
                 (mcp-sidecar--gateway conn)))))

(provide 'mcp-sidecar-client)
;;; mcp-sidecar-client.el ends here
