;;; tasks-test.el --- A tool call that becomes a task; the tasks list; cancel  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; FastMCP's tasks fixture (fixtures/python/fastmcp_tasks_server.py, run by MCP_PYTHON from
;; scripts/install-peers.sh) behind the real sidecar: `mcp-sidecar-call-tool' on a tool the
;; server runs as a task waits for it (the mode line counts it), answers its question in the
;; minibuffer and shows its result; `mcp-sidecar-tasks' lists it and shows its result again;
;; `c' there cancels a running task (the fixture writes down the tasks/cancel it got); a task no
;; call waits for is announced when it ends.

;;; Code:

(require 'mcp-sidecar-test-helpers)
(require 'mcp-sidecar-tasks)

(defconst tasks-test-cancel-log (make-temp-file "tasks-test-cancel-")
  "Where the fixture writes the tasks it was asked to cancel.")

(defconst tasks-test-fixture
  (expand-file-name "../../../fixtures/python/fastmcp_tasks_server.py"
                    (file-name-directory (or load-file-name buffer-file-name)))
  "The tasks fixture.")

(defun tasks-test-server ()
  "The tasks fixture's definition, named \"tasks\"."
  (let ((python (getenv "MCP_PYTHON")))
    (unless (and python (file-executable-p python))
      (error "MCP_PYTHON must name the peers venv python (scripts/install-peers.sh)"))
    (list "tasks" :command python :args (list tasks-test-fixture)
          :env (list :TASKS_WORK_MS "1200" :TASKS_POLL_MS "100"
                     :TASKS_CANCEL_LOG tasks-test-cancel-log))))

(defun tasks-test-task (tool)
  "The task of TOOL the current sidecar knows, or nil."
  (let (found)
    (maphash (lambda (_key task) (when (equal (plist-get task :tool) tool) (setq found task)))
             (mcp-sidecar--tasks (mcp-sidecar--connection)))
    found))

(defun tasks-test-list-buffer ()
  "Open the tasks list; return its buffer."
  (mcp-sidecar-tasks)
  (mst-wait (lambda () (cl-find-if (lambda (b) (with-current-buffer b
                                                 (derived-mode-p 'mcp-sidecar-tasks-mode)))
                                   (buffer-list)))
            "the tasks buffer"))

(defun tasks-test-goto (tool)
  "Put point on the line of TOOL's task in the current tasks buffer."
  (goto-char (point-min))
  (should (search-forward (concat " " tool " ") nil t))
  (should (equal tool (plist-get (tabulated-list-get-id) :tool))))

(ert-deftest tasks-test-a-call-that-becomes-a-task ()
  "The call waits for the task, its question is answered, its result shows; then the list."
  (mst-start (list (tasks-test-server)))
  (setq mst-minibuffers nil)
  (let (mode-lines)
    (let ((record (lambda () (push (mcp-sidecar--status-text) mode-lines))))
      (add-hook 'minibuffer-setup-hook record)
      (unwind-protect
          (mst-press "C-u M-x" '("mcp-sidecar-call-tool") "RET" '("slow_report") "TAB RET"
                     '("{\"topic\": \"q3\"}") "RET"
                     "<f12>" '("long") "TAB RET"
                     "<f12>" '("Submit") "TAB RET")
        (remove-hook 'minibuffer-setup-hook record)))
    (let ((result (mst-result "tasks" "slow_report")))
      (should (string-search "report on q3: depth long" result)))
    (should (string-search "How deep should the report on q3 go?"
                           (car (car (mst-prompts "› Depth")))))
    ;; While its question was open, the task ran: the mode line counted it.
    (should (cl-some (lambda (line) (string-search "⧗1" line)) mode-lines)))
  (mst-wait (lambda () (equal "completed" (plist-get (tasks-test-task "slow_report") :status)))
            "the task to be completed")
  (should-not (string-search "⧗" (mcp-sidecar--status-text)))
  ;; The call waited for it: its end is not announced.
  (should-not (string-search "task tasks › slow_report completed" (mst-messages)))
  ;; The list shows it; RET shows its result again.
  (with-current-buffer (tasks-test-list-buffer)
    (tasks-test-goto "slow_report")
    (should (string-search "completed" (buffer-substring (line-beginning-position)
                                                         (line-end-position))))
    (mcp-sidecar-tasks-show))
  (let* ((task (tasks-test-task "slow_report"))
         (text (mst-text (mst-buffer (format "*mcp task: tasks/%s*" (plist-get task :taskId))))))
    (should (string-search "report on q3: depth long" text))
    (should (string-search (concat "Task " (plist-get task :taskId) ": completed") text)))
  (mst-back-to-workspace))

(ert-deftest tasks-test-cancel-from-the-list ()
  "c on a running task: the server gets tasks/cancel, the task and the call end cancelled."
  (mst-start (list (tasks-test-server)))
  (mcp-sidecar-call-tool "tasks" "never_finishes" (make-hash-table))
  (let ((task (mst-wait (lambda () (tasks-test-task "never_finishes")) "the task to run")))
    (with-current-buffer (tasks-test-list-buffer)
      (select-window (get-buffer-window (current-buffer)))
      (tasks-test-goto "never_finishes")
      (mst-press "c"))
    (mst-wait (lambda ()
                (string-search (concat "cancelled never_finishes " (plist-get task :taskId))
                               (with-temp-buffer
                                 (insert-file-contents tasks-test-cancel-log)
                                 (buffer-string))))
              "the fixture to get tasks/cancel")
    (mst-wait (lambda () (equal "cancelled" (plist-get (tasks-test-task "never_finishes") :status)))
              "the task to end cancelled")
    (mst-wait (lambda () (string-search "tasks › never_finishes: cancelled" (mst-messages)))
              "the call to end cancelled")
    (should (string-search "cancelling the task tasks › never_finishes" (mst-messages)))
    (should-not (string-search "task tasks › never_finishes was cancelled" (mst-messages))))
  (mst-back-to-workspace))

(ert-deftest tasks-test-a-task-nobody-waits-for-is-announced ()
  "A call not made by `mcp-sidecar-call-tool' (an agent's, say): its end is announced, once."
  (let ((conn (mst-start (list (tasks-test-server))))
        result)
    (mcp-sidecar--exec conn 'call-tool (list :server "tasks" :tool "quick" :arguments (list :x 7))
                       (lambda (value) (setq result value)))
    (mst-wait (lambda () result) "the call's result")
    (should (equal 7 (plist-get (plist-get result :structuredContent) :result)))
    (mst-wait (lambda () (string-search
                          "mcp-sidecar: task tasks › quick completed (M-x mcp-sidecar-tasks shows it)"
                          (mst-messages)))
              "the announcement")
    (let ((messages (mst-messages)) (start 0) (n 0))
      (while (setq start (string-search "task tasks › quick completed" messages start))
        (setq n (1+ n) start (1+ start)))
      (should (= n 1)))))

;;; tasks-test.el ends here
