import json
T="docs/tuqulore-employee-handbook/"; D="docs/denkiyagi-employee-handbook/"
P="docs/pagerduty-incident-response-ja/docs/"; A="docs/future-arch-guidelines/documents/"
O="docs/owasp-"
T01=T+"01_就業規則.md"; T02=T+"02_賃金規程.html"; T03=T+"03_出張旅費規程.pdf"; T04=T+"04_福利厚生規程.docx"
T05=T+"05_電子取引の取引情報に係る電磁的記録の保存に関する事務処理規程.docx"; T07=T+"07_備品管理規程.pdf"
TUW=T+"UPDATE_WORKFLOW.docx"; TI=T+"ISSUE_TEMPLATE/"
D001=D+"001_就業規則.md"; D002=D+"002_賃金規程.html"; D003=D+"003_退職金規程.pdf"; D004=D+"004_出張旅費規程.pdf"
D005=D+"005_福利厚生規程.docx"; D011=D+"011_短時間正社員就業規則.docx"; D022=D+"022_特定個人情報取扱規程補足資料_保存期間.html"
D031=D+"031_選択的公休制度に関する規程.pdf"
PSEV=P+"before/severity_levels.html"; PPM=P+"after/post_mortem_process.pdf"; POC=P+"oncall/being_oncall.pdf"
PTPL=P+"after/post_mortem_template.md"; PCALL=P+"before/call_etiquette.pdf"; PAL=P+"oncall/alerting_principles.html"; PSCR=P+"training/scribe.docx"
ASL=A+"forSlack/slack_usage_guidelines.pdf"; ACR=A+"forCodeReview/code_review.pdf"; AGB=A+"forGitBranch/git_branch_standards.docx"
AMAIL=A+"forMail/mail_guidelines.html"; ANFR=A+"forNFR/appendix.md"
LLMCORE=O+"llm-top10-ja/Document/CoreTeam.xlsx"; LLM01=O+"llm-top10-ja/Document/2_0_vulns/LLM01_PromptInjection.pdf"
DSO=O+"devsecops-guideline-ja/document/current-version/0-Intro/0-1-Intro.pdf"

Q=[]
def q(kind,question,answers,gold,**kw):
    Q.append(dict(question=question,kind=kind,answers=answers,gold_files=gold,answerable=True,**kw))
def u(question,keys):
    Q.append(dict(question=question,kind="unanswerable",answers=[],gold_files=[],answerable=False,absent_keys=keys))
def tp(question,parts,gold):
    Q.append(dict(question=question,kind="two_page",answers=[],answers_all=parts,gold_files=gold,answerable=True))

# amount
q("amount","ツクロアの交通手当って月いくらまで出るの？",["10,000円"],[T02])
q("amount","デンキヤギで一般社員が出張したら日当っていくらもらえる？",["2,500円"],[D004])
q("amount","ツクロアの出張で政令指定都市に泊まるとき、宿泊費は一泊いくら？",["8,000円"],[T03])
q("amount","デンキヤギの社内の飲み会、会社の補助って1人いくらまで出る？",["5,000円"],[D005])
q("amount","デンキヤギの退職金共済の掛金って毎月いくら払ってもらえてる？",["5,000円"],[D003])
q("amount","ツクロアで仕事用の機材買ったら年いくらまで補助してくれる？",["40,000円"],[T04])
q("amount","デンキヤギの常勤正社員、通勤手当の上限っていくら？",["45,000円"],[D002])
q("amount","ツクロアだと、いくら以上のモノが会社の備品として管理されるの？",["10万円以上","10万円"],[T07])
q("amount","デンキヤギで片道5kmをチャリ通してる場合、通勤手当は1日いくら？",["210円"],[D002])
q("amount","デンキヤギの臨時社員の通勤手当って1日あたりの上限ある？いくら？",["1,000円"],[D002])
q("amount","ツクロアのインフルの予防接種、会社負担は年いくらまで？",["5,000円"],[T04])
# date / duration
q("date","ツクロアの給料って何日締めで、いつ振り込まれる？",["当月末日","20日に締め切って"],[T02])
q("date","デンキヤギの昇給のタイミングっていつ？",["7月1日"],[D002])
q("date","ツクロアの定期健康診断って毎年何月にやるの？",["毎年6月"],[T01])
q("date","ツクロアで本を買ったあと、補助の申請っていつまでにすればいい？",["60日以内"],[T04])
q("date","デンキヤギで有給取りたいとき、いつまでに届ければいい？",["前日まで","取得希望日の前日までに届け出"],[D001])
q("date","デンキヤギで結婚休暇取るなら何日前までに出さないとダメ？",["30日前まで"],[D001])
q("date","ツクロアで海外出張から戻ったら、何日以内に精算しなきゃいけない？",["14日以内"],[T03])
q("date","デンキヤギの選択公休って、使いたい月のどれくらい前までに申し出るの？",["1ヶ月前まで"],[D031])
q("date","SEV-2のインシデントのポストモーテム会議はいつまでに設定する決まり？",["5営業日以内"],[PPM])
q("date","ツクロアのフレックスの清算期間っていつからいつまで？",["21日から翌月20日まで"],[T01])
q("date","ツクロアでメールでもらった請求書のデータって何年とっておくの？",["10年間"],[T05])
# count
q("count","デンキヤギで勤続10年未満だと、休職って通算何回までできる？",["通算2回","2回"],[D001])
q("count","ツクロアで1歳未満の子どもがいる女性社員の育児時間は1日何回？",["2回"],[T01])
q("count","デンキヤギに週5日勤務の正社員で入ったら、入社直後の特別休暇は何日もらえる？",["2日"],[D001])
q("count","IPAの非機能要求グレードって大項目いくつに分かれてるんだっけ？",["6つ"],[ANFR])
q("count","プルリクのマージに必要な承認って何人？",["1名以上"],[ACR])
q("count","デンキヤギで有給を買い取ってもらうとき、上限は何日？",["20日"],[D001])
q("count","ツクロアで有給って繰越込みで最大何日まで持てる？",["最大40日","40日"],[T01])
# name
q("name","デンキヤギの退職金ってどこから支払われるの？",["中退共","勤労者退職金共済機構"],[D003])
q("name","インシデントコマンダーを呼び出すSlackのコマンドって何？",["!ic page"],[PSEV,PCALL])
q("name","ポストモーテムのオーナーって誰が指名するの？",["インシデントコマンダー"],[PPM])
q("name","ポストモーテムの会議はどの共有カレンダーに入れればいい？",["インシデントポストモーテムミーティング","Incident Postmortem"],[PPM,PTPL])
q("name","LLM Top 10 のバージョン1.0で全体のリードやってたのは誰？",["Steve Wilson"],[LLMCORE])
q("name","ツクロアで備品を記録しておく台帳って何て名前？",["備品管理表"],[T07])
q("name","デンキヤギの法定休日は何曜日？",["日曜日"],[D001])
q("name","ポストモーテムのフォローアップのチケットはどこで切る？",["JIRA"],[PPM])
q("name","新しく作ったアラートのテストは普段どのイベントでやってる？",["Failure Friday"],[PAL])
# yes/no
q("yes_no","ツクロアって退職金出るの？",["退職金は支給しない","支給しない"],[T01])
q("yes_no","ツクロアって副業してもいいの？",["従事することができる"],[T01])
q("yes_no","デンキヤギってマイカー通勤OK？",["原則として認めない"],[D001])
q("yes_no","ツクロアの書籍補助で買った本って、会社に返さないとダメ？",["本人に帰属する"],[T04])
q("yes_no","デンキヤギで試用期間中でも書籍補助って使える？",["第3条及び4条のみ"],[D005])
q("yes_no","デンキヤギで自分で企画した研修出張でも日当は出る？",["一切支給しない"],[D004])
q("yes_no","夜中にSlackでメンバー宛てに投稿しちゃっていい？",["原則禁止"],[ASL])
# procedure
q("procedure","ツクロアで有給使いたいとき、何を出せばいい？",["休暇届"],[TI+"01_休暇届.md"])
q("procedure","ツクロアで家じゃなくてカフェとかで仕事したいときはどうすればいい？",["就業場所の一時変更願"],[TI+"04_就業場所の一時変更願.md"])
q("procedure","ツクロアで夜10時過ぎに作業したいときの手続きは？",["深夜業申請","事前にその労働日、労働時間を会社に申し出"],[TI+"06_深夜業申請.md",T01])
q("procedure","デンキヤギで出張行く前に出さなきゃいけない書類は？",["出張申請書"],[D004])
q("procedure","デンキヤギの出張から帰ってきたら、精算には何を出すの？",["出張旅費清算書"],[D004])
q("procedure","デンキヤギで自転車通勤したいんだけど、何が必要？",["事前に届出","保険に加入"],[D001])
q("procedure","インシデントの電話会議にICがいないっぽいんだけど、どうすればいい？",["!ic page"],[PCALL])
q("procedure","まだ作業途中のプルリクってどうしておけばいい？",["Draft"],[ACR])
q("procedure","ツクロアの就業規則を変えたいとき、どういう流れで進めるの？",["プルリクエストを作成","作業ブランチを作成"],[TUW])
q("procedure","DMARCを入れるとき、SPFやDKIMとの順番はどうする？",["SPF/DKIMの設定が完了してから"],[AMAIL])
q("procedure","オンコールのシフトが終わるとき、何をしておけばいい？",["次のオンコール担当者"],[POC])
q("procedure","ツクロアで健康診断を受ける前に、会社に何を届け出る？",["受診する病院","健康診断受診届"],[T01,TI+"03_健康診断受診届.html"])
q("procedure","ツクロアで規程改正のリリースタグってどういう書式で付けるの？",["YYYYMMDD"],[TUW])
# policy / fact
q("policy","インシデントの重大度がSEV-1かSEV-2か迷ったらどうする？",["高いほうの重大度"],[PSEV])
q("policy","Slackで「明日」とか書かずに日付はどう書くべき？",["絶対表記"],[ASL])
q("policy","夜中に人を起こすアラートってどういう条件のものにすべき？",["即座に人間がアクションを取れる"],[PAL])
q("policy","Slackで@channelって使っても大丈夫？",["緊急時を除き、原則利用を禁止"],[ASL])
q("fact","プルリクで変更ファイルが何個くらいを超えるとレビューがしんどくなるって書いてある？",["20ファイル以上"],[ACR])
q("fact","テストカバレッジってどれくらいが目安？",["C0 90%"],[ACR])
q("fact","ツクロアの正社員って週何時間働く契約？",["30時間"],[T01])
q("fact","デンキヤギの労災保険関係の書類って保存期間どれくらい？",["完結の日から3年間","3年間"],[D022])
q("name","LLM Top 10 v1.0のデザインリードって誰だっけ？",["Mike Finch"],[LLMCORE])
q("fact","画面一覧でUIS01ってどの画面のこと？",["トップページ"],[A+"forMarkdown/sample/ui/index.xlsx"])
q("policy","SQL書くとき、予約語って大文字？小文字？",["小文字"],["docs/future-coding-standards/documents/forSQL/SQLコーディング規約（PostgreSQL）.html"])
q("policy","SQLのインデントってスペース？タブ？",["タブ文字"],["docs/future-coding-standards/documents/forSQL/SQLコーディング規約（PostgreSQL）.html"])
# two_page
tp("ツクロアとデンキヤギ、それぞれ定年って何歳？",[["満65歳","65歳"],["満60歳","60歳"]],[T01,D001])
tp("試用期間ってツクロアとデンキヤギでどれくらい違う？",[["6か月間","6か月"],["3か月間","3か月"]],[T01,D001])
tp("書籍補助の上限、ツクロアとデンキヤギでそれぞれいくら？",[["20,000円"],["5,000円"]],[T04,D005])
tp("ボーナスが出る時期、ツクロアとデンキヤギでそれぞれいつ？",[["5月末日","11月末日"],["期末賞与（6月）","6月"]],[T02,D002])
tp("予防接種補助の上限、ツクロアとデンキヤギで比べるとどう？",[["5,000円"],["15,000円"]],[T04,D005])
tp("辞めたいとき、ツクロアとデンキヤギだと退職願を出してからどれくらいで退職になる？",[["14日を経過"],["1か月を経過"]],[T01,D001])
tp("100km以上の出張の日当、ツクロアとデンキヤギ（一般社員）だといくらずつ？",[["3,000円"],["2,500円"]],[T03,D004])
tp("SEV-1が起きたら、ICはどうやって呼んで、ポストモーテム会議はいつまでに設定する？",[["!ic page"],["3日以内"]],[PSEV,PPM])
tp("入社したときの書類提出の期限、ツクロアとデンキヤギでそれぞれいつまで？",[["1週間以内"],["3日以内"]],[T01,D001])
# cross-language
q("cross_language","What is the monthly cap on Tuqulore's transport allowance?",["10,000円"],[T02])
q("cross_language","How much daily allowance does a regular DenkiYagi employee get for each business-trip day?",["2,500円"],[D004])
q("cross_language","How many days of paid leave does a full-time Tuqulore employee get after six months of service?",["10日"],[T01])
q("cross_language","What is the mandatory retirement age at DenkiYagi?",["満60歳","60歳"],[D001])
q("cross_language","Within how many days must the postmortem meeting for a SEV-1 incident be scheduled?",["3日以内"],[PPM])
q("cross_language","What is the yearly cap on Tuqulore's equipment purchase subsidy?",["40,000円"],[T04])
q("cross_language","What is DenkiYagi's commuting allowance cap for full-time regular employees?",["45,000円"],[D002])
q("cross_language","How long does Tuqulore keep electronic transaction records such as invoices and receipts?",["10年間"],[T05])
q("cross_language","What hotel allowance per night does DenkiYagi pay for a business trip inside Tokyo's 23 wards?",["9,000円"],[D004])
q("cross_language","According to the DevSecOps guideline, fixing a design-phase defect costs roughly what fraction of fixing one found in production?",["100 分の 1"],[DSO])
# unanswerable
u("ツクロアって在宅勤務手当は月いくら出るの？",["在宅勤務手当","リモートワーク手当","テレワーク"])
u("社員旅行って毎年どこに行ってるの？",["社員旅行"])
u("誕生日休暇ってある？",["誕生日"])
u("リフレッシュ休暇って勤続何年でもらえる？",["リフレッシュ休暇"])
u("デンキヤギの夏休みって何日あるの？",["夏季休暇","夏期休暇"])
u("資格取ったら報奨金とか出る？",["報奨金","資格手当","資格取得"])
u("扶養家族がいると家族手当つく？",["家族手当","扶養手当"])
u("会社から仕事用のスマホって支給される？",["社用携帯","社用スマホ"])
u("オンコール当番の手当って月いくら？",["オンコール手当","オンコール当番"])
u("ストックオプションってもらえるの？",["ストックオプション"])
u("英会話のレッスン代って補助してもらえる？",["英会話","語学"])
u("転勤で引っ越すとき転居手当って出る？",["転居","単身赴任"])
u("忘年会の会社負担って1人いくら？",["忘年会"])
u("社員食堂とか食事補助ってある？",["社員食堂","食事補助"])
u("インフルの予防接種、社内の集団接種っていつやるの？",["集団接種"])
u("支給されるPCってMacBook選べる？",["MacBook"])
u("服装の決まりってある？スーツ必須？",["服装","ドレスコード","スーツ"])
u("会社の保養所って使える？",["保養所"])
u("永年勤続表彰ってある？",["永年勤続","表彰"])
u("確定拠出年金（iDeCo・企業型DC）の制度はある？",["確定拠出","iDeCo"])
u("人を紹介して採用されたらリファラルのボーナス出る？",["リファラル","紹介制度","紹介手当"])
u("ベビーシッター代とか保育料の補助ってある？",["ベビーシッター","保育"])

# conversations
C=[]
def conv(*turns, topic_change=False):
    C.append((turns,topic_change))
def t(kind,question,answers,gold): return dict(kind=kind,question=question,answers=answers,gold_files=gold,answerable=True)
def tu(question,keys): return dict(kind="unanswerable",question=question,answers=[],gold_files=[],answerable=False,absent_keys=keys)

conv(t("amount","ツクロアの出張で東京23区に泊まったら一泊いくら出る？",["9,000円"],[T03]),
     t("policy","実家に泊まった場合は？",["宿泊費を支給しない"],[T03]),
     t("amount","じゃあセミナーの懇親会代は？",["5,000円"],[T03]))
conv(t("count","デンキヤギで入社して半年たったら有給何日もらえる？",["10日"],[D001]),
     t("count","週3日勤務で週30時間未満の人だと？",["5日"],[D001]),
     t("yes_no","使い切れなかった分は翌年に持ち越せる？",["次年度に限り繰りこすことができる"],[D001]))
conv(t("count","ツクロアの慶弔休暇、自分が結婚したら何日？",["5日"],[T01]),
     t("count","妻が出産したときは？",["3日"],[T01]),
     tu("誕生日休暇もあったりする？",["誕生日"]))
conv(t("policy","インシデントの重大度、どっちか迷ったらどうすればいい？",["高いほうの重大度"],[PSEV]),
     t("name","ICはどうやって呼ぶの？",["!ic page"],[PSEV]),
     t("date","SEV-1だったらポストモーテムはいつまでに？",["3日以内"],[PPM]))
conv(t("date","デンキヤギの書籍補助って買ってから何日以内に申請？",["10日以内"],[D005]),
     t("fact","話変わるけど、デンキヤギの定年って何歳？",["満60歳","60歳"],[D001]), topic_change=True)
conv(t("date","ツクロアの賞与っていつ支給される？",["5月末日","11月末日"],[T02]),
     t("count","全然関係ないけど、オンコールのエスカレーションのタイムアウトって何分がおすすめ？",["5分"],[POC]), topic_change=True)
conv(t("amount","ツクロアで仕事用の機材を買ったら補助ある？上限は？",["40,000円"],[T04]),
     t("yes_no","それって試用期間中でも使える？",["試用期間を満了している"],[T04]),
     tu("英会話スクールの費用も補助してくれる？",["英会話","語学"]))
conv(t("fact","デンキヤギの所定労働時間って1日何時間？",["1日8時間","8時間"],[D001]),
     t("date","休憩は何時から何時？",["11時45分から12時45分"],[D001]),
     t("date","短時間正社員だと休憩時間は？",["11時45分から12時45分"],[D011]))
conv(t("procedure","デンキヤギで副業したいんだけど、何か手続きいる？",["許可を受けなければならない","事前に届出"],[D001]),
     t("policy","届け出ないでやってたのがバレたら？",["懲戒処分を行うことがある"],[D001]))
conv(t("policy","Slackで@channelって使っていいの？",["緊急時を除き、原則利用を禁止"],[ASL]),
     t("name","ところで、featureブランチってどういう名前にすればいい？",["feature/${チケット番号}"],[AGB]), topic_change=True)
conv(t("fact","ツクロアの正社員の所定労働時間って週何時間？",["30時間"],[T01]),
     t("amount","残業代の割増率は？",["1.25"],[T02]),
     tu("みなし残業って何時間分含まれてる？",["みなし残業","固定残業"]))
conv(t("date","ツクロアで退職願を出したら、どれくらいで辞められる？",["14日を経過"],[T01]),
     t("yes_no","退職金は出る？",["退職金は支給しない","支給しない"],[T01]))
conv(t("amount","デンキヤギで自転車で片道5km通勤してる場合、1日いくら出る？",["210円"],[D002]),
     t("fact","ところでプロンプトインジェクションってどういう脆弱性？",["意図しない方法で変更"],[LLM01]), topic_change=True)
conv(t("policy","ポストモーテムの対外メッセージで使っちゃダメな言葉ってある？",["outage","機能停止"],[PPM]),
     t("policy","代わりに何て書けばいい？",["サービス低下","インシデント"],[PPM]))
conv(t("fact","オンコールのとき、常に用意しておくものって何？",["ノートパソコンとインターネット環境"],[POC]),
     tu("オンコールの手当って出るの？",["オンコール手当"]))
conv(t("amount","ツクロアの備品ってどういうモノが対象になる？",["10万円以上","1年以上"],[T07]),
     t("policy","備品の持ち主は誰になるの？",["会社に帰属する"],[T07]))
conv(t("procedure","ツクロアで電子で受け取った請求書、ファイル名はどう付ければいい？",["取引年月日、取引先、取引金額の順序"],[T05]),
     t("date","全然別件だけど、デンキヤギの雇用保険の書類って何年保管？",["完結の日から2年間","4年間"],[D022]), topic_change=True)
conv(t("fact","デンキヤギの慶弔見舞金って、どんなときに出るの？",["子が生まれたとき","結婚したとき"],[D005]),
     t("amount","金額はいくら？",["その都度決定する"],[D005]),
     tu("社員旅行とかもある？",["社員旅行"]))
conv(t("policy","アラートの優先度「中」ってどういう扱い？",["営業時間のみ","24時間以内"],[PAL]),
     t("name","じゃあデプロイ成功みたいな通知は？",["Notification","抑制されたイベント"],[PAL]))
conv(t("fact","テストカバレッジの目安ってどのくらい？",["C0 90%"],[ACR]),
     t("yes_no","ところでデンキヤギって車で通勤していい？",["原則として認めない"],[D001]), topic_change=True)
conv(t("amount","ツクロアの健康診断って費用出してもらえるの？",["法令で定められた検査の実費に相当する額"],[T01]),
     tu("歯医者の検診も補助ある？",["歯科","歯医者"]))
conv(t("fact","書記官ってインシデントのとき何をする役？",["タイムラインを維持すること"],[PSCR]),
     t("fact","なるための正式なトレーニングってある？",["正式なトレーニングプロセスはありません"],[PSCR]))

with open("questions.jsonl","w",encoding="utf-8") as f:
    n=0
    for d in Q:
        n+=1; d=dict(id=f"ja-{n:03d}",**d); f.write(json.dumps(d,ensure_ascii=False)+"\n")
    for i,(turns,tc) in enumerate(C,1):
        for j,d in enumerate(turns,1):
            d=dict(id=f"ja-c{i:02d}-t{j}",**d,conversation=f"c-{i:02d}",turn=j)
            if j>1 and tc: d["topic_change"]=True
            f.write(json.dumps(d,ensure_ascii=False)+"\n")
print(len(Q),len(C))
